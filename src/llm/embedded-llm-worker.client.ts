import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Logger } from '@nestjs/common';
import { ModelOutputError, ModelUnavailableError } from './model.errors.js';

/** Where the model is and how it runs, for the worker that loads it. */
export interface EmbeddedWorkerOptions {
  modelPath: string;
  /** `embedded:<name>-<first 12 hex of its SHA-256>`: a new file is a new id. */
  modelId: string;
  label: string;
  threads: number;
  contextSize: number;
  /** Told of every request handed to the model, in the order handed (tests, measurements). */
  onRequest?: (request: { lane: 'reply' | 'task'; body: Record<string, unknown> }) => void;
  workerUrl?: URL;
}

/** What the loaded model reports (/health/ready, the log, docs/models.md's table). */
export interface EmbeddedModelInfo {
  loadMs: number;
  contextSize: number;
  modelBytes: number;
  memoryBytes: number;
  threads: number;
}

export type Lane = 'reply' | 'task';

export interface WorkerRequestBody {
  system: string;
  messages: { role: 'user' | 'assistant'; content: string }[];
  schema: unknown;
  maxTokens: number;
  temperature?: number;
  seed?: number;
  stream: boolean;
}

interface Request {
  id: number;
  lane: Lane;
  body: WorkerRequestBody;
  onDelta?: (text: string) => void;
  resolve: (answer: WorkerAnswer) => void;
  reject: (err: Error) => void;
}

export interface WorkerAnswer {
  text: string;
  stopReason: string;
  promptTokens: number;
  completionTokens: number;
}

type WorkerMessage =
  | ({ type: 'ready' } & EmbeddedModelInfo)
  | { type: 'fatal'; message: string }
  | { type: 'delta'; id: number; text: string }
  | ({ type: 'done'; id: number } & WorkerAnswer)
  | { type: 'error'; id: number; message: string };

/** How long a closing worker may take to free the model before it is terminated. */
const CLOSE_WAIT_MS = 15_000;

/**
 * The worker thread that holds the embedded model: started on first use, one request at a time,
 * replies before background tasks (a summary waiting never delays someone's answer by more than
 * the request in flight), closed without aborting llama.cpp mid-run.
 */
export class EmbeddedLlmWorkerClient {
  info: EmbeddedModelInfo | null = null;

  private readonly logger = new Logger('EmbeddedLanguageModel');
  private readonly modelId: string;
  private readonly workerUrl: URL;
  private worker: Worker | null = null;
  private ready: Promise<Worker> | null = null;
  private readonly lanes: Record<Lane, Request[]> = { reply: [], task: [] };
  private inFlight: Request | null = null;
  private loading = false;
  private nextId = 1;

  constructor(private readonly options: EmbeddedWorkerOptions) {
    this.modelId = options.modelId;
    this.workerUrl = options.workerUrl ?? new URL('./embedded-llm.worker.mjs', import.meta.url);
  }

  /**
   * Stops the model: what waits is failed, what runs is stopped, and the worker frees the model
   * and ends itself (terminating it while llama.cpp runs would abort the process); terminated
   * only if it has not ended after CLOSE_WAIT_MS.
   */
  async close(): Promise<void> {
    const worker = this.worker;
    this.reset(this.unavailable('the embedded model was closed', 'reply'));
    if (!worker) return;
    const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' });
    const timer = setTimeout(() => void worker.terminate(), CLOSE_WAIT_MS);
    await ended;
    clearTimeout(timer);
  }

  enqueue(
    lane: Lane,
    body: WorkerRequestBody,
    onDelta?: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<WorkerAnswer> {
    return new Promise<WorkerAnswer>((resolve, reject) => {
      const request: Request = { id: this.nextId++, lane, body, onDelta, resolve, reject };
      if (signal?.aborted) {
        resolve({ text: '', stopReason: 'abort', promptTokens: 0, completionTokens: 0 });
        return;
      }
      signal?.addEventListener(
        'abort',
        () => {
          const queued = this.lanes[lane].indexOf(request);
          if (queued >= 0) {
            this.lanes[lane].splice(queued, 1);
            resolve({ text: '', stopReason: 'abort', promptTokens: 0, completionTokens: 0 });
          } else if (this.inFlight === request) {
            this.worker?.postMessage({ type: 'cancel', id: request.id });
          }
        },
        { once: true },
      );
      this.lanes[lane].push(request);
      this.start().then(
        () => this.dispatch(),
        (err: Error) => reject(err),
      );
    });
  }

  private dispatch(): void {
    const worker = this.worker;
    if (worker && !this.loading && !this.inFlight) {
      const next = this.lanes.reply.shift() ?? this.lanes.task.shift();
      if (next) {
        this.inFlight = next;
        this.options.onRequest?.({ lane: next.lane, body: { ...next.body } });
        worker.postMessage({ type: 'run', id: next.id, ...next.body });
      }
    }
    this.updateRef();
  }

  start(): Promise<Worker> {
    if (this.ready) return this.ready;
    const path = fileURLToPath(this.workerUrl);
    if (!existsSync(path)) {
      return Promise.reject(
        new ModelUnavailableError(
          `The embedded model's worker script is missing at ${path}; the build must copy src/llm/*.mjs into dist/src/llm/.`,
          { task: 'reply', model: this.modelId, attempts: 1 },
          false,
        ),
      );
    }
    const worker = new Worker(this.workerUrl, {
      workerData: {
        modelPath: this.options.modelPath,
        threads: this.options.threads,
        contextSize: this.options.contextSize,
      },
    });
    this.worker = worker;
    this.loading = true;
    this.updateRef();
    this.ready = new Promise<Worker>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        switch (message.type) {
          case 'ready': {
            const { type: _type, ...info } = message;
            this.info = info;
            this.loading = false;
            this.logger.log(
              `${this.options.label} loaded in ${info.loadMs} ms: context ${info.contextSize} tokens, ` +
                `${Math.round(info.memoryBytes / 1e6)} MB, ${info.threads} thread(s)`,
            );
            resolve(worker);
            this.dispatch();
            break;
          }
          case 'fatal':
            reject(
              this.unavailable(
                `could not load ${this.options.modelPath}: ${message.message}`,
                'reply',
              ),
            );
            this.reset(this.unavailable(`could not load the model: ${message.message}`, 'reply'));
            break;
          case 'delta':
            if (this.inFlight?.id === message.id) this.inFlight.onDelta?.(message.text);
            break;
          case 'done':
            this.settle(message.id, (r) => r.resolve(message));
            break;
          case 'error':
            this.settle(message.id, (r) =>
              r.reject(
                new ModelOutputError(`${this.modelId} failed to generate: ${message.message}`, {
                  task: r.lane === 'reply' ? 'reply' : 'task',
                  model: this.modelId,
                  attempts: 1,
                }),
              ),
            );
            break;
        }
      });
      const fail = (err: ModelUnavailableError) => {
        if (this.worker !== worker) return;
        this.logger.warn(err.message);
        reject(err);
        this.reset(err);
      };
      worker.on('error', (err) => fail(this.unavailable(`worker failed: ${err.message}`, 'reply')));
      worker.on('exit', (code) =>
        fail(this.unavailable(`worker exited with code ${code}`, 'reply')),
      );
    });
    return this.ready;
  }

  private settle(id: number, action: (request: Request) => void): void {
    const request = this.inFlight;
    if (!request || request.id !== id) return;
    this.inFlight = null;
    action(request);
    this.dispatch();
  }

  /** Fails everything waiting; the next call starts a fresh worker. */
  private reset(err: Error): void {
    const pending = [this.inFlight, ...this.lanes.reply.splice(0), ...this.lanes.task.splice(0)];
    for (const request of pending) request?.reject(err);
    this.inFlight = null;
    this.worker = null;
    this.ready = null;
    this.loading = false;
  }

  /** An idle worker must not keep the process alive; a busy one must. */
  private updateRef(): void {
    if (!this.worker) return;
    const busy = this.loading || this.inFlight || this.lanes.reply.length || this.lanes.task.length;
    if (busy) this.worker.ref();
    else this.worker.unref();
  }

  private unavailable(message: string, task: string): ModelUnavailableError {
    return new ModelUnavailableError(`Embedded model: ${message}`, {
      task,
      model: this.modelId,
      attempts: 1,
    });
  }
}
