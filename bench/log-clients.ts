/**
 * The load of bench:log, in a thread of its own so that the clients' work (HTTP, JSON) does not
 * run on the service's event loop: each client sends `sendMessage` and waits for the answer
 * before the next. Posts back every latency and the errors.
 */
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

export interface ClientsInput {
  url: string;
  bearer: string;
  /** The conversation of each client (the same one for --same-conversation). */
  conversations: string[];
  /** Messages per client. */
  counts: number[];
  /** First message number (negative for the warm-up, so the texts differ). */
  from: number;
}

export interface ClientsOutput {
  latencies: number[];
  errors: number;
  firstError: string | null;
  elapsedMs: number;
}

const SEND = `mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { turnIndex } } }`;

async function send(input: ClientsInput, conversationId: string, content: string): Promise<void> {
  const res = await fetch(input.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${input.bearer}` },
    body: JSON.stringify({ query: SEND, variables: { input: { conversationId, content } } }),
  });
  const body = (await res.json()) as {
    errors?: { message: string; extensions?: { code?: string } }[];
  };
  if (body.errors?.length) {
    const [e] = body.errors;
    throw new Error(`${e.extensions?.code ?? res.status}: ${e.message}`);
  }
}

async function main(input: ClientsInput): Promise<ClientsOutput> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  const started = performance.now();
  await Promise.all(
    input.counts.map(async (count, c) => {
      for (let i = 0; i < count; i++) {
        const n = input.from + i;
        const text = `Client ${c}, message ${n}: he kept bees behind the orchard and sold the honey at the Saturday market.`;
        const t0 = performance.now();
        try {
          await send(input, input.conversations[c], text);
          latencies.push(performance.now() - t0);
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
        }
      }
    }),
  );
  return { latencies, errors, firstError, elapsedMs: performance.now() - started };
}

main(workerData as ClientsInput).then(
  (out) => parentPort!.postMessage(out),
  (err: unknown) => {
    throw err;
  },
);
