/**
 * npm run bench:log -- [--clients 8] [--messages 2000] [--same-conversation] [--warmup 20]
 *                      [--jobs here|elsewhere] [--server]
 *
 * Throughput and latency of the conversation log: N concurrent clients send `sendMessage` over
 * GraphQL/HTTP, each waiting for its previous answer, to the real application on a fresh embedded
 * database, or with DATABASE_URL on that server (in a database of its own, dropped afterwards);
 * --server without DATABASE_URL starts (or reuses) the project's test server, postgres.sh.
 * By default each client has a conversation of its own; --same-conversation makes them all
 * append to one (every send then queues on that conversation's turn counter). The background
 * jobs each turn enqueues (segments, vectors) run meanwhile: in this process (`--jobs here`), or,
 * with DATABASE_URL, in a second service process on the same database (`--jobs elsewhere`, as
 * a deployment with worker instances runs them). The clients run in a thread of their own; the
 * event-loop delay of the service is reported beside the latencies.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { createApp } from '../src/bootstrap.js';
import type { ClientsInput, ClientsOutput } from './log-clients.js';
import {
  benchConfig,
  wholeArg,
  BENCH_LIMITS,
  benchDatabase,
  benchServerUrl,
  JWT_SECRET,
  percentile,
  table,
  token,
} from './support.js';

function options() {
  const { values } = parseArgs({
    options: {
      clients: { type: 'string', default: '8' },
      messages: { type: 'string', default: '2000' },
      warmup: { type: 'string', default: '20' },
      'same-conversation': { type: 'boolean', default: false },
      jobs: { type: 'string', default: 'here' },
      server: { type: 'boolean', default: false },
    },
  });
  if (values.jobs !== 'here' && values.jobs !== 'elsewhere') {
    throw new Error('--jobs is here or elsewhere');
  }
  const serverUrl = benchServerUrl(values.server);
  if (values.jobs === 'elsewhere' && !serverUrl) {
    throw new Error('--jobs elsewhere needs a server (DATABASE_URL or --server)');
  }
  const clients = Math.max(1, wholeArg('clients', values.clients, 0));
  return {
    clients,
    /** Total measured messages, shared out evenly between the clients. */
    messages: Math.max(clients, wholeArg('messages', values.messages, 0)),
    /** Unmeasured messages per client first (connections, JIT, caches). */
    warmup: wholeArg('warmup', values.warmup, 0),
    sameConversation: values['same-conversation'],
    jobsHere: values.jobs === 'here',
    serverUrl,
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

/** Runs the clients in a thread of their own and waits for their figures. */
function clients(input: ClientsInput): Promise<ClientsOutput> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./log-clients.js', import.meta.url), { workerData: input });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the clients' thread exited with ${code}`));
    });
  });
}

/** A second service process on the same database that runs the background jobs. */
function jobsProcess(env: Record<string, string>) {
  const proc = spawn(process.execPath, [new URL('../src/main.js', import.meta.url).pathname], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

async function main(): Promise<void> {
  const opts = options();
  const perClient = Array.from(
    { length: opts.clients },
    (_, i) => Math.floor(opts.messages / opts.clients) + (i < opts.messages % opts.clients ? 1 : 0),
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'keepsake-bench-'));
  const server = opts.serverUrl ? await benchDatabase(opts.serverUrl) : null;
  const config = benchConfig(dataDir, server, {
    // One user writes everything here: the bench measures the work, not the abuse limits.
    CONVERSATIONS_PER_USER_PER_DAY: '1000000',
    ...(opts.jobsHere ? {} : { JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' }),
  });
  const bootStarted = performance.now();
  const app = await createApp(config);
  const worker =
    server && !opts.jobsHere
      ? jobsProcess({
          ...BENCH_LIMITS,
          DATABASE_URL: server.url,
          JWT_SECRET,
          LOG_LEVEL: 'silent',
          AGENT_REPLY: 'off',
          PORT: '0',
        })
      : null;
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const bootMs = performance.now() - bootStarted;
    const url = `http://127.0.0.1:${port}/graphql`;
    const bearer = token('bench-user');
    const gql = client(url, bearer);

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
    const all = perClient.map((_, c) => conversationOf(c));
    await clients({
      url,
      bearer,
      conversations: all,
      counts: perClient.map(() => opts.warmup),
      from: -opts.warmup,
    });

    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const run = await clients({ url, bearer, conversations: all, counts: perClient, from: 0 });
    const { latencies, errors, firstError } = run;
    const elapsedS = run.elapsedMs / 1000;
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
        `  clients            ${opts.clients} in a thread of their own (each waits for its previous answer)`,
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
        `event-loop delay of the service while sending (background indexing ${opts.jobsHere ? 'in this process' : 'in a second process'}): p50 ${ms(loop.percentile(50) / 1e6)} ms, ` +
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
    await worker?.stop();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
    await server?.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
