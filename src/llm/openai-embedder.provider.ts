import { Logger } from '@nestjs/common';
import OpenAI, { APIError } from 'openai';
import { Embedder, l2Normalize } from './embedder.js';
import { ModelOutputError } from './model.errors.js';
import { ModelUsageRecorder, reportCall } from './model-usage.js';
import {
  MalformedResponseError,
  OpenAiEndpointOptions,
  classifyOpenAiError,
  createOpenAiClient,
  describeError,
  toModelError,
  withDeadline,
} from './openai-transport.js';
import { RetriesExhausted, withRetries } from './retry.js';
import { countTokens, truncateToTokens } from './tokenizer.js';

export interface OpenAiEmbedderOptions extends OpenAiEndpointOptions {
  model: string;
  dimensions: number;
  batchSize: number;
}

/** OpenAI's per-input limit is 8192 tokens; longer inputs are cut rather than rejected. */
const MAX_INPUT_TOKENS = 8000;
/** OpenAI caps one request at 300k tokens; stay well below it. */
const MAX_REQUEST_TOKENS = 200_000;

/**
 * Any OpenAI-compatible /v1/embeddings endpoint. `dimensions` is sent (text-embedding-3 models
 * shorten their vectors to it); a server that rejects the parameter gets requests without it
 * from then on, and every returned vector must still have the configured size.
 */
export class OpenAiEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;

  private readonly logger = new Logger('OpenAiEmbedder');
  private readonly client: OpenAI;
  private sendDimensions = true;

  constructor(
    private readonly options: OpenAiEmbedderOptions,
    private readonly recorder: ModelUsageRecorder,
  ) {
    this.modelId = `openai:${options.model}`;
    this.dimensions = options.dimensions;
    this.client = createOpenAiClient(options);
  }

  async embed(texts: string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (const batch of this.batches(texts)) vectors.push(...(await this.embedBatch(batch)));
    return vectors;
  }

  private *batches(texts: string[]): Generator<string[]> {
    let batch: string[] = [];
    let tokens = 0;
    for (const raw of texts) {
      // Servers reject empty strings; a blank text embeds as a single space.
      const text = raw.trim() === '' ? ' ' : truncateToTokens(raw, MAX_INPUT_TOKENS);
      const count = countTokens(text);
      if (
        batch.length > 0 &&
        (batch.length >= this.options.batchSize || tokens + count > MAX_REQUEST_TOKENS)
      ) {
        yield batch;
        batch = [];
        tokens = 0;
      }
      batch.push(text);
      tokens += count;
    }
    if (batch.length > 0) yield batch;
  }

  private async embedBatch(input: string[]): Promise<number[][]> {
    const started = performance.now();
    let requests = 0;
    let promptTokens = 0;
    let usageEstimated = false;
    const record = (ok: boolean, error?: string) =>
      reportCall(this.recorder, {
        task: 'embed',
        model: this.modelId,
        promptTokens,
        completionTokens: 0,
        durationMs: Math.round(performance.now() - started),
        attempts: requests,
        ok,
        error,
        usageEstimated,
      });

    try {
      const { value } = await withRetries(
        this.options.retry,
        async () => {
          requests++;
          const response = await this.request(input, () => requests++);
          return { response, vectors: this.check(response, input.length, requests) };
        },
        classifyOpenAiError,
      );
      const reported = value.response.usage?.prompt_tokens;
      if (typeof reported === 'number') {
        promptTokens = reported;
      } else {
        promptTokens = input.reduce((sum, t) => sum + countTokens(t), 0);
        usageEstimated = true;
      }
      record(true);
      return value.vectors;
    } catch (err) {
      const error =
        err instanceof RetriesExhausted ? toModelError(err, 'embed', this.modelId, requests) : err;
      record(false, describeError(error));
      throw error;
    }
  }

  /** One request, resent once without `dimensions` if the server rejects that parameter. */
  private async request(
    input: string[],
    countResend: () => void,
  ): Promise<OpenAI.CreateEmbeddingResponse> {
    const send = () =>
      withDeadline(this.options.timeoutMs, (deadline) =>
        this.client.embeddings.create(
          {
            model: this.options.model,
            input,
            encoding_format: 'float',
            ...(this.sendDimensions ? { dimensions: this.dimensions } : {}),
          },
          { signal: deadline.signal },
        ),
      );
    try {
      return await send();
    } catch (err) {
      if (this.sendDimensions && rejectsDimensions(err)) {
        this.sendDimensions = false;
        this.logger.warn(
          `${this.modelId} rejected the "dimensions" parameter; sending requests without it from now on`,
        );
        countResend();
        return await send();
      }
      throw err;
    }
  }

  private check(
    response: OpenAI.CreateEmbeddingResponse,
    expected: number,
    attempts: number,
  ): number[][] {
    const details = { task: 'embed', model: this.modelId, attempts };
    if (typeof response !== 'object' || response === null || !Array.isArray(response.data)) {
      // A proxy's error page or a truncated body: worth another attempt.
      throw new MalformedResponseError(`${this.modelId} answered without a "data" list`);
    }
    if (response.data.length !== expected) {
      throw new ModelOutputError(
        `${this.modelId} returned ${response.data.length} vectors for ${expected} texts`,
        details,
      );
    }
    // Servers may answer out of order; `index` is authoritative when present.
    const ordered = [...response.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map((item, i) => {
      const vector = item.embedding as unknown;
      if (
        !Array.isArray(vector) ||
        !vector.every((x) => typeof x === 'number' && Number.isFinite(x))
      ) {
        throw new ModelOutputError(`${this.modelId} returned a malformed vector at ${i}`, details);
      }
      if (vector.length !== this.dimensions) {
        throw new ModelOutputError(
          `${this.modelId} returned a ${vector.length}-d vector; EMBEDDINGS_DIMENSIONS is ${this.dimensions}`,
          details,
        );
      }
      return l2Normalize(vector as number[]);
    });
  }
}

function rejectsDimensions(err: unknown): boolean {
  return (
    err instanceof APIError &&
    (err.status === 400 || err.status === 422) &&
    /dimension/i.test(describeError(err))
  );
}
