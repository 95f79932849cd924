/**
 * npm run bench:log -- [--clients 8] [--messages 2000] [--same-conversation] [--warmup 20]
 *
 * Throughput and latency of the conversation log: N concurrent clients send `sendMessage` over
 * GraphQL/HTTP, each waiting for its previous answer, to the real application on a fresh embedded
 * database, or with DATABASE_URL on that server (in a database of its own, dropped afterwards).
 * By default each client has a conversation of its own; --same-conversation makes them all
 * append to one (every send then queues on that conversation's turn counter). The background
 * jobs each turn enqueues (segments, vectors) run meanwhile; the event-loop delay of the process
 * is reported beside the latencies.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createApp } from '../src/bootstrap.js';
import { AppConfig } from '../src/config/app-config.js';
import { BENCH_LIMITS, benchDatabase, JWT_SECRET, percentile, table, token } from './support.js';

function positive(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number`);
  return n;
}

function options() {
  const { values } = parseArgs({
    options: {
      clients: { type: 'string', default: '8' },
      messages: { type: 'string', default: '2000' },
      warmup: { type: 'string', default: '20' },
      'same-conversation': { type: 'boolean', default: false },
    },
  });
  const clients = Math.max(1, positive('clients', values.clients));
  return {
    clients,
    /** Total measured messages, shared out evenly between the clients. */
    messages: Math.max(clients, positive('messages', values.messages)),
    /** Unmeasured messages per client first (connections, JIT, caches). */
    warmup: positive('warmup', values.warmup),
    sameConversation: values['same-conversation'],
  };
}

interface GqlResult<T> {
  data?: T;
  errors?: { message: string; extensions?: { code?: string } }[];
}

function client(url: string, bearer: string) {
  return async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as GqlResult<T>;
    if (body.errors?.length) {
      const [e] = body.errors;
      throw new Error(`${e.extensions?.code ?? res.status}: ${e.message}`);
    }
    return body.data!;
  };
}

const SEND = `mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { turnIndex } } }`;

async function main(): Promise<void> {
  const opts = options();
  const perClient = Array.from(
    { length: opts.clients },
    (_, i) => Math.floor(opts.messages / opts.clients) + (i < opts.messages % opts.clients ? 1 : 0),
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'keepsake-bench-'));
  const server = process.env.DATABASE_URL ? await benchDatabase(process.env.DATABASE_URL) : null;
  const config = AppConfig.load({
    ...BENCH_LIMITS,
    DATA_DIR: dataDir,
    ...(server ? { DATABASE_URL: server.url, DATABASE_POOL_SIZE: '20' } : {}),
    JWT_SECRET,
    LOG_LEVEL: 'silent',
    AGENT_REPLY: 'off',
    // One user writes everything here: the bench measures the work, not the abuse limits.
    CONVERSATIONS_PER_USER_PER_DAY: '1000000',
  });
  const bootStarted = performance.now();
  const app = await createApp(config);
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const bootMs = performance.now() - bootStarted;
    const gql = client(`http://127.0.0.1:${port}/graphql`, token('bench-user'));

    const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Benchmark" }) { id } }',
    );
    const start = () =>
      gql<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: createLegacy.id },
      ).then((r) => r.startConversation.id);
    const conversations: string[] = [];
    for (let i = 0; i < (opts.sameConversation ? 1 : opts.clients); i++) {
      conversations.push(await start());
    }
    const conversationOf = (c: number) => conversations[opts.sameConversation ? 0 : c];
    const text = (c: number, i: number) =>
      `Client ${c}, message ${i}: he kept bees behind the orchard and sold the honey at the Saturday market.`;

    await Promise.all(
      perClient.map(async (_, c) => {
        for (let i = 0; i < opts.warmup; i++) {
          await gql(SEND, { input: { conversationId: conversationOf(c), content: text(c, -i) } });
        }
      }),
    );

    const latencies: number[] = [];
    let errors = 0;
    let firstError: string | null = null;
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const started = performance.now();
    await Promise.all(
      perClient.map(async (count, c) => {
        for (let i = 0; i < count; i++) {
          const t0 = performance.now();
          try {
            await gql(SEND, { input: { conversationId: conversationOf(c), content: text(c, i) } });
            latencies.push(performance.now() - t0);
          } catch (err) {
            errors++;
            firstError ??= (err as Error).message;
          }
        }
      }),
    );
    const elapsedS = (performance.now() - started) / 1000;
    loop.disable();

    // Every send is in the log, once.
    let stored = 0;
    for (const id of conversations) {
      const { conversation } = await gql<{ conversation: { messageCount: number } }>(
        'query($id: ID!) { conversation(id: $id) { messageCount } }',
        { id },
      );
      stored += conversation.messageCount;
    }
    const expected = opts.messages + opts.warmup * opts.clients - errors;

    latencies.sort((a, b) => a - b);
    const ms = (v: number) => v.toFixed(1);
    console.log(
      [
        'Keepsake conversation log benchmark (sendMessage over GraphQL/HTTP)',
        `  clients            ${opts.clients} (each waits for its previous answer)`,
        `  messages           ${opts.messages} measured (${perClient[0]} per client), + ${opts.warmup} warm-up per client`,
        `  conversations      ${conversations.length}${opts.sameConversation ? ' (all clients append to the same one)' : ' (one per client)'}`,
        `  database           ${server ? `PostgreSQL server (DATABASE_URL), pool of 20` : `embedded PGlite in a fresh ${dataDir}`}`,
        `  runtime            node ${process.version}, ${process.platform}/${process.arch}; boot ${ms(bootMs)} ms`,
        '',
        table([
          {
            'messages/s': (latencies.length / elapsedS).toFixed(0),
            'p50 ms': ms(percentile(latencies, 50)),
            'p95 ms': ms(percentile(latencies, 95)),
            'p99 ms': ms(percentile(latencies, 99)),
            'max ms': ms(latencies[latencies.length - 1] ?? NaN),
            errors: String(errors),
            'wall s': elapsedS.toFixed(2),
          },
        ]),
        '',
        `event-loop delay while sending (background indexing running): p50 ${ms(loop.percentile(50) / 1e6)} ms, ` +
          `p99 ${ms(loop.percentile(99) / 1e6)} ms, max ${ms(loop.max / 1e6)} ms`,
      ].join('\n'),
    );
    if (firstError) console.error(`first error: ${firstError}`);
    if (stored !== expected) {
      console.error(`stored ${stored} turns, expected ${expected}`);
      process.exitCode = 1;
    }
    if (errors > 0) process.exitCode = 1;
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
    await server?.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
