import { createHash } from 'node:crypto';
import {
  IncomingHttpHeaders,
  IncomingMessage,
  Server,
  ServerResponse,
  createServer,
} from 'node:http';
import { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { extractFactsHeuristic } from '../../../src/llm/heuristics/fact-patterns.js';
import { summarizeExtractive } from '../../../src/llm/heuristics/extractive-summarizer.js';
import { extractMemoriesHeuristic } from '../../../src/llm/heuristics/memory-patterns.js';
import { structuredListsHeuristic } from '../../../src/llm/heuristics/structured-lists.js';
import { PeriodSummaryText, SummaryTurn } from '../../../src/llm/language-model.js';
import { SCHEMA_NAME, TASK_MARKER } from '../../../src/llm/prompts.js';
import { countTokens } from '../../../src/llm/tokenizer.js';
import { FakeToolCall, toolCallsOf, writeToolCallsReply } from './fake-tool-calls.js';

export type { FakeToolCall } from './fake-tool-calls.js';

/**
 * A scriptable OpenAI-compatible server for tests and benchmarks (node:http only).
 *
 * Routes: POST /v1/chat/completions (plain, json_schema, json_object, SSE streaming, tool calls) and
 * POST /v1/embeddings (hashed bag-of-words vectors: deterministic, NOT semantic), GET /v1/models.
 * Each route answers from its queue of scripted replies first, then from its handler, then in
 * "auto" mode, which produces schema-valid answers for Keepsake's four tasks.
 */
export type FakeRoute = 'chat' | 'embeddings';

export interface FakeRequest {
  route: FakeRoute | 'other';
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; undefined when it was not JSON. */
  body: FakeBody;
  at: number;
}

/** The request fields the fake looks at; everything else is kept as received. */
export interface FakeBody {
  model?: string;
  messages?: {
    role: string;
    /** Who said a user turn (OpenAI's participant name). */
    name?: string;
    content: string | null;
    tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  tools?: {
    type: string;
    function: { name: string; description?: string; parameters?: unknown };
  }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  response_format?: {
    type: string;
    json_schema?: { name?: string; strict?: boolean; schema?: unknown };
  };
  input?: string | string[];
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
  [key: string]: unknown;
}

interface Delay {
  /** Wait before answering. */
  delayMs?: number;
}

export type FakeReply =
  | ({ type: 'auto' } & Delay)
  /** A chat completion whose message is `content` (streamed in word chunks if asked to stream). */
  | ({
      type: 'content';
      content: string;
      finishReason?: string;
      /** null omits `usage`, as some servers do. */
      usage?: { prompt_tokens: number; completion_tokens: number } | null;
    } & Delay)
  /** An OpenAI-style error body with this status, e.g. 429 with Retry-After. */
  | ({
      type: 'error';
      status: number;
      message?: string;
      retryAfter?: string;
      retryAfterMs?: number;
      param?: string;
    } & Delay)
  /** Any JSON body. */
  | ({ type: 'json'; body: unknown; status?: number; headers?: Record<string, string> } & Delay)
  /** Any text body, e.g. malformed JSON with a JSON content type. */
  | ({ type: 'raw'; body: string; status?: number; contentType?: string } & Delay)
  /**
   * An SSE stream of these content deltas. With `cutAfter`, the connection is cut after that
   * many deltas: `destroy` drops the socket, `end` closes the response cleanly without a finish.
   */
  | ({
      type: 'stream';
      deltas: string[];
      cutAfter?: number;
      cut?: 'destroy' | 'end';
      chunkDelayMs?: number;
      finishReason?: string;
      /** Ignore `stream_options.include_usage`, as some servers do. */
      omitUsage?: boolean;
    } & Delay)
  /**
   * The model calls these functions instead of answering (finish_reason tool_calls), whole or
   * streamed: in a stream each call's id and name come first, its arguments in two pieces.
   */
  | ({ type: 'toolCalls'; calls: FakeToolCall[]; content?: string } & Delay)
  /** Accepts the request and never answers (until the client gives up). */
  | { type: 'hang' }
  /** Drops the connection without an answer. */
  | ({ type: 'drop' } & Delay);

export type FakeHandler = (request: FakeRequest) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAiOptions {
  port?: number;
  host?: string;
  /** Vector size when a request carries no `dimensions`. */
  embeddingDimensions?: number;
}

/** Builders for scripted replies. */
export const reply = {
  auto: (delayMs?: number): FakeReply => ({ type: 'auto', delayMs }),
  content: (
    content: string,
    extra: Partial<Extract<FakeReply, { type: 'content' }>> = {},
  ): FakeReply => ({
    type: 'content',
    content,
    ...extra,
  }),
  /** A structured answer: the value serialised as the message content. */
  object: (value: unknown): FakeReply => ({ type: 'content', content: JSON.stringify(value) }),
  error: (
    status: number,
    extra: Partial<Extract<FakeReply, { type: 'error' }>> = {},
  ): FakeReply => ({
    type: 'error',
    status,
    ...extra,
  }),
  rateLimited: (retryAfter: string): FakeReply => ({ type: 'error', status: 429, retryAfter }),
  json: (body: unknown, status = 200): FakeReply => ({ type: 'json', body, status }),
  raw: (body: string, contentType = 'application/json', status = 200): FakeReply => ({
    type: 'raw',
    body,
    contentType,
    status,
  }),
  stream: (
    deltas: string[],
    extra: Partial<Extract<FakeReply, { type: 'stream' }>> = {},
  ): FakeReply => ({
    type: 'stream',
    deltas,
    ...extra,
  }),
  toolCalls: (...calls: FakeToolCall[]): FakeReply => ({ type: 'toolCalls', calls }),
  hang: (): FakeReply => ({ type: 'hang' }),
  drop: (): FakeReply => ({ type: 'drop' }),
};

export class FakeOpenAiServer {
  /** Every request received, oldest first. */
  readonly requests: FakeRequest[] = [];
  /** Answer 400 to `response_format: json_schema`, as servers without structured output do. */
  rejectJsonSchema = false;
  /** Answer 400 to an embeddings request carrying `dimensions`. */
  rejectDimensions = false;

  private readonly queues: Record<FakeRoute, FakeReply[]> = { chat: [], embeddings: [] };
  private readonly handlers: Partial<Record<FakeRoute, FakeHandler>> = {};
  private nextId = 1;
  private initialDimensions = 512;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly host: string,
    /** Vector size when a request carries no `dimensions`. */
    public embeddingDimensions: number,
  ) {}

  static async start(options: FakeOpenAiOptions = {}): Promise<FakeOpenAiServer> {
    const host = options.host ?? '127.0.0.1';
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const instance = new FakeOpenAiServer(server, port, host, options.embeddingDimensions ?? 512);
    instance.initialDimensions = instance.embeddingDimensions;
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      instance.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) writeJson(res, 500, { error: { message: String(err) } });
        else res.destroy();
      });
    });
    return instance;
  }

  /** Base URL for the OpenAI SDK and Keepsake's *_BASE_URL variables. */
  get url(): string {
    return `http://${this.host}:${this.port}/v1`;
  }

  /** Replies used in order, one per request on that route, before the handler or auto mode. */
  enqueue(route: FakeRoute, ...replies: FakeReply[]): this {
    this.queues[route].push(...replies);
    return this;
  }

  /** Answers every request on the route once its queue is empty; undefined restores auto mode. */
  setHandler(route: FakeRoute, handler: FakeHandler | undefined): this {
    this.handlers[route] = handler;
    return this;
  }

  requestsFor(route: FakeRoute): FakeRequest[] {
    return this.requests.filter((r) => r.route === route);
  }

  /** Forgets requests, queues, handlers and switches. */
  reset(): void {
    this.requests.length = 0;
    this.queues.chat.length = 0;
    this.queues.embeddings.length = 0;
    delete this.handlers.chat;
    delete this.handlers.embeddings;
    this.rejectJsonSchema = false;
    this.rejectDimensions = false;
    this.embeddingDimensions = this.initialDimensions;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0];
    const route: FakeRequest['route'] =
      path === '/v1/chat/completions' ? 'chat' : path === '/v1/embeddings' ? 'embeddings' : 'other';
    let body: FakeBody = {};
    let parsed = true;
    try {
      body = raw ? (JSON.parse(raw) as FakeBody) : {};
    } catch {
      parsed = false;
    }
    this.requests.push({
      route,
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body,
      at: Date.now(),
    });

    if (route === 'other') {
      if (req.method === 'GET' && path === '/v1/models') {
        writeJson(res, 200, {
          object: 'list',
          data: ['fake-llm', 'fake-embed'].map((id) => ({
            id,
            object: 'model',
            owned_by: 'keepsake-tests',
          })),
        });
      } else {
        writeJson(res, 404, {
          error: { message: `no route ${req.method} ${path}`, type: 'not_found' },
        });
      }
      return;
    }
    if (!parsed || req.method !== 'POST') {
      writeJson(res, 400, {
        error: { message: 'the body must be JSON', type: 'invalid_request_error' },
      });
      return;
    }
    // Capabilities come before scripts: the scripted reply then answers the client's resend.
    if (route === 'chat' && this.rejectJsonSchema && body.response_format?.type === 'json_schema') {
      writeJson(
        res,
        400,
        errorBody(
          400,
          "response_format 'json_schema' is not supported by this server; use 'json_object'",
          'response_format',
        ),
      );
      return;
    }
    if (route === 'embeddings' && this.rejectDimensions && body.dimensions !== undefined) {
      writeJson(
        res,
        400,
        errorBody(400, 'This model does not support the dimensions parameter', 'dimensions'),
      );
      return;
    }
    const handler = this.handlers[route];
    const scripted =
      this.queues[route].shift() ??
      (handler ? await handler(this.requests[this.requests.length - 1]) : reply.auto());
    if ('delayMs' in scripted && scripted.delayMs) await sleep(scripted.delayMs);
    await this.answer(route, body, scripted, res);
  }

  private async answer(
    route: FakeRoute,
    body: FakeBody,
    scripted: FakeReply,
    res: ServerResponse,
  ): Promise<void> {
    switch (scripted.type) {
      case 'hang':
        return;
      case 'drop':
        res.socket?.destroy();
        return;
      case 'error': {
        const headers: Record<string, string> = {};
        if (scripted.retryAfter !== undefined) headers['retry-after'] = scripted.retryAfter;
        if (scripted.retryAfterMs !== undefined)
          headers['retry-after-ms'] = String(scripted.retryAfterMs);
        writeJson(
          res,
          scripted.status,
          errorBody(scripted.status, scripted.message, scripted.param),
          headers,
        );
        return;
      }
      case 'json':
        writeJson(res, scripted.status ?? 200, scripted.body, scripted.headers);
        return;
      case 'raw':
        res.writeHead(scripted.status ?? 200, {
          'content-type': scripted.contentType ?? 'application/json',
        });
        res.end(scripted.body);
        return;
      case 'stream':
        await this.writeStream(res, body, scripted);
        return;
      case 'toolCalls':
        this.writeToolCalls(res, body, scripted);
        return;
      case 'content':
        if (body.stream) {
          await this.writeStream(res, body, {
            type: 'stream',
            deltas: wordChunks(scripted.content),
            finishReason: scripted.finishReason,
          });
        } else {
          this.writeCompletion(res, body, scripted.content, scripted.finishReason, scripted.usage);
        }
        return;
      case 'auto':
        if (route === 'embeddings') this.autoEmbeddings(res, body);
        else this.autoChat(res, body);
        return;
    }
  }

  private autoChat(res: ServerResponse, body: FakeBody): void {
    const content = autoChatContent(body);
    if (body.stream) {
      void this.writeStream(res, body, { type: 'stream', deltas: wordChunks(content) });
    } else {
      this.writeCompletion(res, body, content);
    }
  }

  private autoEmbeddings(res: ServerResponse, body: FakeBody): void {
    const inputs = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
    if (!Array.isArray(inputs) || inputs.some((t) => typeof t !== 'string' || t.length === 0)) {
      writeJson(
        res,
        400,
        errorBody(400, "'input' must be a non-empty string or a list of them", 'input'),
      );
      return;
    }
    const dims = body.dimensions ?? this.embeddingDimensions;
    writeJson(res, 200, {
      object: 'list',
      model: body.model ?? 'fake-embed',
      data: inputs.map((text, index) => {
        const vector = hashedEmbedding(text, dims);
        return {
          object: 'embedding',
          index,
          embedding:
            body.encoding_format === 'base64'
              ? Buffer.from(Float32Array.from(vector).buffer).toString('base64')
              : vector,
        };
      }),
      usage: {
        prompt_tokens: inputs.reduce((n, t) => n + countTokens(t), 0),
        total_tokens: inputs.reduce((n, t) => n + countTokens(t), 0),
      },
    });
  }

  private writeCompletion(
    res: ServerResponse,
    body: FakeBody,
    content: string,
    finishReason = 'stop',
    usage?: { prompt_tokens: number; completion_tokens: number } | null,
  ): void {
    const counted = usage === undefined ? countUsage(body, content) : usage;
    writeJson(res, 200, {
      id: `chatcmpl-fake-${this.nextId++}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? 'fake-llm',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null },
          finish_reason: finishReason,
          logprobs: null,
        },
      ],
      ...(counted
        ? { usage: { ...counted, total_tokens: counted.prompt_tokens + counted.completion_tokens } }
        : {}),
    });
  }

  private writeToolCalls(
    res: ServerResponse,
    body: FakeBody,
    scripted: Extract<FakeReply, { type: 'toolCalls' }>,
  ): void {
    const id = this.nextId++;
    const content = scripted.content ?? '';
    const calls = toolCallsOf(scripted.calls, id);
    const usage = countUsage(body, content + calls.map((c) => c.function.arguments).join(''));
    writeToolCallsReply(res, body, { id, content, calls, usage });
  }

  private async writeStream(
    res: ServerResponse,
    body: FakeBody,
    scripted: Extract<FakeReply, { type: 'stream' }>,
  ): Promise<void> {
    const id = `chatcmpl-fake-${this.nextId++}`;
    const base = {
      id,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? 'fake-llm',
    };
    const send = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    send({
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    for (let i = 0; i < scripted.deltas.length; i++) {
      if (scripted.cutAfter !== undefined && i >= scripted.cutAfter) {
        // Let what was written reach the client first, so the cut lands mid-stream.
        await new Promise<void>((resolve) => res.write('', () => resolve()));
        await sleep(20);
        if (scripted.cut === 'end') res.end();
        else res.socket?.destroy();
        return;
      }
      if (scripted.chunkDelayMs) await sleep(scripted.chunkDelayMs);
      send({
        ...base,
        choices: [{ index: 0, delta: { content: scripted.deltas[i] }, finish_reason: null }],
      });
    }
    send({
      ...base,
      choices: [{ index: 0, delta: {}, finish_reason: scripted.finishReason ?? 'stop' }],
    });
    if (body.stream_options?.include_usage && !scripted.omitUsage) {
      const usage = countUsage(body, scripted.deltas.join(''));
      send({
        ...base,
        choices: [],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      });
    }
    res.write('data: [DONE]\n\n');
    res.end();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function writeJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function errorBody(status: number, message?: string, param?: string): unknown {
  const type =
    status === 429
      ? 'rate_limit_exceeded'
      : status >= 500
        ? 'server_error'
        : 'invalid_request_error';
  return {
    error: { message: message ?? `fake ${status}`, type, param: param ?? null, code: null },
  };
}

function countUsage(
  body: FakeBody,
  content: string,
): { prompt_tokens: number; completion_tokens: number } {
  const prompt = (body.messages ?? []).reduce((n, m) => n + countTokens(m.content ?? '') + 4, 0);
  return { prompt_tokens: prompt, completion_tokens: countTokens(content) };
}

/** Splits text into word-sized deltas that concatenate back to it. */
function wordChunks(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [''];
}

/**
 * Hashed bag of words, L2-normalised. A test double only: it is not semantic (texts sharing
 * words score high, paraphrases do not).
 */
export function hashedEmbedding(text: string, dims: number): number[] {
  const vector = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9']+/g) ?? []) {
    const h = createHash('sha1').update(word).digest();
    const index = h.readUInt32BE(0) % dims;
    vector[index] += h[4] & 1 ? 1 : -1;
  }
  const norm = Math.sqrt(vector.reduce((s, x) => s + x * x, 0));
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  return vector.map((x) => x / norm);
}

// ---- auto mode: schema-valid answers built with Keepsake's own offline heuristics ----

type AutoTask = 'summarizeTurns' | 'extractMemories' | 'summarizePeriod' | 'rewriteQuery' | 'reply';

export function detectTask(body: FakeBody): AutoTask {
  const name = body.response_format?.json_schema?.name;
  if (name === SCHEMA_NAME.summarizeTurns) return 'summarizeTurns';
  if (name === SCHEMA_NAME.extractMemories) return 'extractMemories';
  if (name === SCHEMA_NAME.summarizePeriod) return 'summarizePeriod';
  if (name === SCHEMA_NAME.rewriteQuery) return 'rewriteQuery';
  const system = body.messages?.find((m) => m.role === 'system')?.content ?? '';
  if (system.startsWith(TASK_MARKER.summarizeTurns)) return 'summarizeTurns';
  if (system.startsWith(TASK_MARKER.extractMemories)) return 'extractMemories';
  if (system.startsWith(TASK_MARKER.summarizePeriod)) return 'summarizePeriod';
  if (system.startsWith(TASK_MARKER.rewriteQuery)) return 'rewriteQuery';
  return 'reply';
}

function lastUserMessage(body: FakeBody): string {
  const users = (body.messages ?? []).filter((m) => m.role === 'user');
  return users[users.length - 1]?.content ?? '';
}

function autoChatContent(body: FakeBody): string {
  const task = detectTask(body);
  const user = lastUserMessage(body);
  if (task === 'summarizeTurns') return JSON.stringify(autoSummary(user));
  if (task === 'summarizePeriod') return JSON.stringify(autoPeriodSummary(user));
  if (task === 'rewriteQuery') return JSON.stringify(autoQueryRewrite(user));
  if (task === 'extractMemories') {
    const turn = /User turn:\n<<<\n([\s\S]*?)\n>>>/.exec(user)?.[1] ?? '';
    const known = /Known memories:\n([\s\S]*?)\n\nUser turn:/.exec(user)?.[1] ?? '';
    const existingMemories = known
      .split('\n')
      .filter((l) => l.startsWith('- '))
      .map((l) => l.slice(2));
    return JSON.stringify({
      memories: extractMemoriesHeuristic({ userTurn: turn, existingMemories }),
    });
  }
  const messages = body.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    // After tool calls: the results, so tests can see they were fed back.
    const results = messages
      .slice(messages.map((m) => m.role).lastIndexOf('assistant') + 1)
      .map((m) => m.content ?? '');
    return `Fake reply after tools: ${results.join(' | ')}`;
  }
  const said = user.replace(/\s+/g, ' ').slice(0, 200);
  return `This is a fake reply from the test server. You said: "${said}"`;
}

/** Parses the summarize-turns prompt layout of src/llm/prompts.ts. */
function autoSummary(user: string): unknown {
  const legacyName = /^Legacy: (.*)$/m.exec(user)?.[1] ?? 'the legacy';
  const knownBlock = /Known facts:\n([\s\S]*?)\n\nConversation:/.exec(user)?.[1] ?? '';
  const existingFacts = knownBlock
    .split('\n')
    .filter((l) => l.startsWith('- '))
    .map((l) => l.slice(2));
  const turns: SummaryTurn[] = [];
  const conversation = user.split('\nConversation:\n')[1] ?? '';
  for (const line of conversation.split('\n')) {
    const m = /^\[turn (\d+)\] (USER|ASSISTANT) \(([^)]*)\): (.*)$/.exec(line);
    if (m) {
      turns.push({
        turnIndex: Number(m[1]),
        role: m[2] as 'USER' | 'ASSISTANT',
        occurredAt: new Date(m[3]),
        content: m[4],
      });
    } else if (line.startsWith('    ') && turns.length > 0) {
      turns[turns.length - 1].content += `\n${line.slice(4)}`;
    }
  }
  if (turns.length === 0) {
    return {
      summary: 'The fake server found no turns in the request.',
      structured: { facts: [], preferences: [], decisions: [], todos: [], entities: [] },
      facts: [],
    };
  }
  const facts = extractFactsHeuristic(legacyName, turns, existingFacts);
  const summary = summarizeExtractive(turns)
    .map((s) => s.text)
    .join(' ')
    .slice(0, 2000);
  return {
    summary: summary || 'The conversation was brief.',
    structured: structuredListsHeuristic(turns, facts),
    facts,
  };
}

/**
 * Parses the summarize-period prompt layout of src/llm/prompts.ts. The lists are gathered from
 * the sources' own lists (a theme in two or more sources counts as recurring), so the answer
 * holds nothing that is not in the request.
 */
function autoPeriodSummary(user: string): PeriodSummaryText {
  const legacyName = /^Legacy: (.*)$/m.exec(user)?.[1] ?? 'the legacy';
  const period = /^Period: (\w+) (\S+) to (\S+)$/m.exec(user);
  const sources = user.split(/^\[source \d+\] /m).slice(1);
  const listOf = (source: string, label: string): string[] =>
    new RegExp(`^${label}: (.*)$`, 'm')
      .exec(source)?.[1]
      .split('; ')
      .map((s) => s.trim())
      .filter((s) => s.length > 0) ?? [];
  /** Each entry once, first spelling kept, with the number of sources naming it. */
  const gather = (label: string, max: number): { text: string; sources: number }[] => {
    const seen = new Map<string, { text: string; sources: number }>();
    for (const source of sources) {
      for (const item of new Set(listOf(source, label))) {
        const entry = seen.get(item.toLowerCase()) ?? { text: item, sources: 0 };
        entry.sources++;
        seen.set(item.toLowerCase(), entry);
      }
    }
    return [...seen.values()].slice(0, max);
  };
  const names = (label: string) => gather(label, 15).map((e) => e.text);
  const themes = gather('Themes', 8);
  const recurring = themes
    .filter((t) => t.sources >= 2)
    .slice(0, 5)
    .map((t) => `The user came back to ${t.text} more than once.`);
  const themeList = themes.map((t) => t.text);
  const span = period ? `${period[1].toLowerCase()} from ${period[2]} to ${period[3]}` : 'period';
  return {
    summary:
      `The user talked about ${legacyName} over the ${span}. ` +
      `The fake server read ${sources.length} source(s). ` +
      (themeList.length > 0
        ? `The main themes were ${themeList.join(', ')}.`
        : 'No themes were named in them.'),
    emotionalTone: 'reflective',
    keyThemes: themeList,
    recurringPatterns: recurring,
    people: names('People'),
    places: names('Places'),
  };
}

/**
 * A stand-in for a model's query rewrite: the question as a statement, and its parts around
 * "and" as sub-questions when it joins several, so tests can see each part searched.
 */
function autoQueryRewrite(user: string): { answer: string; subQuestions: string[] } {
  const question = (/Question: ([\s\S]*)$/.exec(user)?.[1] ?? '').trim().replace(/\?+$/, '');
  const parts = question
    .split(/\s+and\s+/i)
    .map((p) => p.trim())
    .filter((p) => p.split(/\s+/).length >= 3);
  return {
    answer: question ? `I remember this: ${question}.` : '',
    subQuestions: parts.length > 1 ? parts.slice(0, 3).map((p) => `${p}?`) : [],
  };
}
