/**
 * The clients of bench:load, in a thread of their own so that their work (HTTP, JSON) does not
 * run on the service's event loop. Each client is its own user with its own legacy and
 * conversation, and waits for each answer before its next call. The thread is told three
 * phases in turn: `setup` (the legacy, the conversation, the warm-up sends), `run` (the measured
 * mix for a number of seconds) and `count` (the turns each conversation holds). One thread does
 * all three, so the run goes over the keep-alive connections the warm-up opened, as clients that
 * stay connected do (a fresh thread per phase made 200 connections at the run's first instant,
 * and its first calls waited seconds for them, in the measured figures).
 */
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';
import { rng } from './support.js';

export interface LoadClient {
  bearer: string;
  legacyId?: string;
  conversationId?: string;
}

export type LoadInput =
  | { phase: 'setup'; url: string; clients: LoadClient[]; warmup: number }
  | {
      phase: 'run';
      url: string;
      clients: LoadClient[];
      seconds: number;
      /** Share of calls that are `recall` (the rest `sendMessage`). */
      recallShare: number;
      /** Each client's first call comes at a random moment within this many ms of the start. */
      rampMs: number;
      seed: number;
    }
  | { phase: 'count'; url: string; clients: LoadClient[] };

export interface CallResult {
  op: 'sendMessage' | 'recall';
  /** Milliseconds from the request to its answer, errors included. */
  ms: number;
  /** When it was asked, in ms from the start of the run. */
  atMs: number;
  /** The error's extensions.code (or what failed), null when it succeeded. */
  error: string | null;
  /** extensions.retryAfterSeconds of a refusal. */
  retryAfterSeconds?: number;
}

export type LoadOutput =
  | { phase: 'setup'; clients: LoadClient[] }
  | {
      phase: 'run';
      calls: CallResult[];
      /** Sends answered without error, per client. */
      sent: number[];
      firstError: string | null;
      elapsedMs: number;
    }
  | { phase: 'count'; stored: number[] };

interface GqlError {
  message: string;
  extensions?: { code?: string; retryAfterSeconds?: number };
}

class CallError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

async function gql<T>(
  url: string,
  bearer: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ query, variables }),
    });
  } catch (err) {
    const cause = (err as Error).cause;
    throw new CallError(
      'NETWORK',
      `${(err as Error).message}${cause ? ` (${String(cause)})` : ''}`,
    );
  }
  const body = (await res.json()) as { data?: T; errors?: GqlError[] };
  if (body.errors?.length) {
    const [e] = body.errors;
    const code = e.extensions?.code ?? `HTTP_${res.status}`;
    throw new CallError(code, `${code}: ${e.message}`, e.extensions?.retryAfterSeconds);
  }
  return body.data!;
}

const SEND = `mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { turnIndex } } }`;
const RECALL = `query($l: ID!, $q: String!) { recall(legacyId: $l, query: $q) { edges { score node { id } } } }`;

const PLACES = ['the orchard', 'the harbour', 'the allotment', 'the chapel', 'the old mill'];
const THINGS = ['bees', 'pigeons', 'roses', 'a rowing boat', 'a wireless set'];
const QUESTIONS = [
  'Where did he keep the bees?',
  'What did they sell at the Saturday market?',
  'Who rowed out past the harbour?',
  'What grew on the allotment?',
  'When did the old mill close?',
];

function message(c: number, n: number): string {
  return (
    `Client ${c}, message ${n}: he kept ${THINGS[n % THINGS.length]} behind ` +
    `${PLACES[(n + c) % PLACES.length]} and sold what he could at the Saturday market.`
  );
}

async function setup(
  input: Extract<LoadInput, { phase: 'setup' }>,
): Promise<Extract<LoadOutput, { phase: 'setup' }>> {
  const clients = await Promise.all(
    input.clients.map(async (client, c) => {
      // A refusal (nothing done) is tried again after the wait it asks for.
      const call = async <T>(query: string, variables: Record<string, unknown> = {}) => {
        for (;;) {
          try {
            return await gql<T>(input.url, client.bearer, query, variables);
          } catch (err) {
            const wait = (err as CallError).retryAfterSeconds;
            if (!wait) throw err;
            await new Promise((r) => setTimeout(r, wait * 1000));
          }
        }
      };
      const { createLegacy } = await call<{ createLegacy: { id: string } }>(
        `mutation { createLegacy(input: { name: "Load ${c}" }) { id } }`,
      );
      const { startConversation } = await call<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: createLegacy.id },
      );
      for (let i = 0; i < input.warmup; i++) {
        await call(SEND, {
          input: { conversationId: startConversation.id, content: message(c, -1 - i) },
        });
      }
      if (input.warmup > 0)
        await call(RECALL, { l: createLegacy.id, q: QUESTIONS[c % QUESTIONS.length] });
      return { ...client, legacyId: createLegacy.id, conversationId: startConversation.id };
    }),
  );
  return { phase: 'setup', clients };
}

async function run(
  input: Extract<LoadInput, { phase: 'run' }>,
): Promise<Extract<LoadOutput, { phase: 'run' }>> {
  const calls: CallResult[] = [];
  const sent = input.clients.map(() => 0);
  let firstError: string | null = null;
  const started = performance.now();
  const deadline = started + input.seconds * 1000;
  await Promise.all(
    input.clients.map(async (client, c) => {
      const draw = rng(input.seed + c);
      // People do not all press send at one instant: the first calls are spread over the ramp.
      await new Promise((r) => setTimeout(r, draw() * input.rampMs));
      for (let n = 0; performance.now() < deadline; n++) {
        const op = draw() < input.recallShare ? 'recall' : 'sendMessage';
        const t0 = performance.now();
        try {
          if (op === 'recall') {
            await gql(input.url, client.bearer, RECALL, {
              l: client.legacyId,
              q: QUESTIONS[(n + c) % QUESTIONS.length],
            });
          } else {
            await gql(input.url, client.bearer, SEND, {
              input: { conversationId: client.conversationId, content: message(c, n) },
            });
            sent[c]++;
          }
          calls.push({ op, ms: performance.now() - t0, atMs: t0 - started, error: null });
        } catch (err) {
          const e = err as CallError;
          calls.push({
            op,
            ms: performance.now() - t0,
            atMs: t0 - started,
            error: e.code ?? 'ERROR',
            retryAfterSeconds: e.retryAfterSeconds,
          });
          firstError ??= e.message;
          // A refusal says when to come back: these clients wait that long, as a polite one would.
          if (e.retryAfterSeconds) {
            await new Promise((r) => setTimeout(r, e.retryAfterSeconds! * 1000));
          }
        }
      }
    }),
  );
  return { phase: 'run', calls, sent, firstError, elapsedMs: performance.now() - started };
}

async function count(
  input: Extract<LoadInput, { phase: 'count' }>,
): Promise<Extract<LoadOutput, { phase: 'count' }>> {
  const stored: number[] = [];
  // One at a time: the service may still be busy with the background work the run left.
  for (const client of input.clients) {
    const { conversation } = await gql<{ conversation: { messageCount: number } }>(
      input.url,
      client.bearer,
      'query($id: ID!) { conversation(id: $id) { messageCount } }',
      { id: client.conversationId },
    );
    stored.push(conversation.messageCount);
  }
  return { phase: 'count', stored };
}

parentPort!.on('message', (input: LoadInput) => {
  const work =
    input.phase === 'setup' ? setup(input) : input.phase === 'run' ? run(input) : count(input);
  work.then(
    (out) => parentPort!.postMessage(out),
    (err: unknown) => {
      throw err;
    },
  );
});
