// Runs a sentence-transformer ONNX model off the main thread (onnxruntime-node, CPU), with the
// model's own tokenizer (@huggingface/tokenizers, from its tokenizer.json). Texts arrive with
// their prefixes; this file tokenizes, batches texts of like length, pools (CLS or the mean over
// real tokens, as the model card says) and L2-normalises.
// Plain JavaScript so the same file runs from src/ under Jest and from dist/ after the build.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { serveEmbeddings } from './embed-worker-loop.mjs';
import ort from 'onnxruntime-node';
import { Tokenizer } from '@huggingface/tokenizers';

const { modelPath, tokenizerPath, pooling, maxTokens, batchSize = 16, threads = 1 } = workerData;
// Padded tokens in one model call: 16 long passages of 512 tokens took over 1 GB of activations.
const BATCH_TOKENS = 4096;

let session;
let tokenizer;
let withTypes;
try {
  const started = performance.now();
  tokenizer = new Tokenizer(JSON.parse(readFileSync(tokenizerPath, 'utf8')), {});
  session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // Spinning threads wait for work by burning a core: on a machine that shares its cores with
    // the database and the requests, that cost a third of the throughput (measured on 2 cores).
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  });
  withTypes = session.inputNames.includes('token_type_ids');
  parentPort.postMessage({ type: 'ready', loadMs: Math.round(performance.now() - started) });
} catch (err) {
  parentPort.postMessage({ type: 'fatal', message: String(err?.stack ?? err) });
  process.exit(1);
}

/** Token ids with [CLS] ... [SEP]; a long text keeps its start and its closing [SEP]. */
function encode(text) {
  // About four characters a token in English: a generous cut before tokenizing a long text.
  const ids = tokenizer.encode(
    text.length > maxTokens * 8 ? text.slice(0, maxTokens * 8) : text,
  ).ids;
  return ids.length <= maxTokens ? ids : [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]];
}

async function embedAll(texts) {
  const encoded = texts.map(encode);
  // Like lengths together, so a batch pads little.
  const order = encoded.map((_, i) => i).sort((a, b) => encoded[a].length - encoded[b].length);
  let out = null;
  let dims = 0;
  for (let start = 0; start < order.length;) {
    // Sorted by length: the last text of a batch is its longest, and sets its padded length.
    let size = 1;
    while (
      size < batchSize &&
      start + size < order.length &&
      (size + 1) * encoded[order[start + size]].length <= BATCH_TOKENS
    ) {
      size++;
    }
    const batch = order.slice(start, start + size);
    start += size;
    const length = Math.max(...batch.map((i) => encoded[i].length));
    const ids = new BigInt64Array(batch.length * length);
    const mask = new BigInt64Array(batch.length * length);
    batch.forEach((i, b) => {
      encoded[i].forEach((id, j) => {
        ids[b * length + j] = BigInt(id);
        mask[b * length + j] = 1n;
      });
    });
    const shape = [batch.length, length];
    const feeds = {
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
    };
    if (withTypes) {
      feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(ids.length), shape);
    }
    const result = await session.run(feeds);
    const hidden = result[session.outputNames[0]];
    dims = hidden.dims[2];
    out ??= new Float32Array(texts.length * dims);
    const data = hidden.data;
    batch.forEach((i, b) => {
      const v = out.subarray(i * dims, (i + 1) * dims);
      const base = b * length * dims;
      if (pooling === 'cls') {
        for (let d = 0; d < dims; d++) v[d] = data[base + d];
      } else {
        const n = encoded[i].length;
        for (let j = 0; j < n; j++) {
          for (let d = 0; d < dims; d++) v[d] += data[base + j * dims + d];
        }
        for (let d = 0; d < dims; d++) v[d] /= n;
      }
      let sum = 0;
      for (let d = 0; d < dims; d++) sum += v[d] * v[d];
      const norm = Math.sqrt(sum) || 1;
      for (let d = 0; d < dims; d++) v[d] /= norm;
    });
    for (const tensor of Object.values(result)) tensor.dispose?.();
  }
  return out ?? new Float32Array(0);
}

serveEmbeddings(embedAll);
