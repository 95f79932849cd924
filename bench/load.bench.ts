/**
 * npm run bench:load -- [--clients 200] [--seconds 60] [--recall 0.2] [--warmup 2] [--seed 1]
 *                       [--ramp 1] [--settle 5] [--server [--replicas N]]
 *
 * The service under a crowd: --clients concurrent clients, each its own user with its own legacy
 * and conversation, call for --seconds a mix of `sendMessage` (AGENT_REPLY=off, so the log and
 * the background work each turn enqueues) and `recall` (a --recall share of the calls) over
 * GraphQL/HTTP, each waiting for its previous answer (each client's first call at a random moment
 * of the first --ramp seconds; 0 starts them all at one instant), against the real application on a fresh
 * embedded database, or with DATABASE_URL on that server (in a database of its own, dropped
 * afterwards; --server without DATABASE_URL starts or reuses the project's test server,
 * postgres.sh). The background jobs run in the service process meanwhile. Prints the latency
 * distribution (all calls and per operation), calls answered per second, errors by code, and
 * the writes lost (a send answered without error but not in the log) or left behind (a send
 * refused but in the log), with the service's event-loop delay and the machine's load average.
 * The table counts the calls asked after the first --settle seconds: in those, every client's
 * first call comes within --ramp, up to 200 at once where the crowd's own pace is about one
 * answer per client every two or three seconds; they are shown on a line of their own. The
 * service's variables set in the environment apply (EMBEDDED_DATABASE_THREAD=main, or
 * DATABASE_POOL_SIZE, say); the pools are the service's defaults otherwise.
 *
 * --replicas N: a primary of the bench's own and N streaming replicas (bench/support.ts), the
 * run made twice in one go, on a fresh database each time: without replicas (reads on the
 * primary's read pool), then with DATABASE_REPLICA_URLS naming them; the figures side by side.
 */
import type { Server } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap.js';
import { databaseVariables } from '../src/database/database.config.js';
import type { CallResult, LoadClient, LoadInput, LoadOutput } from './load-clients.js';
import {
  benchConfig,
  benchDatabase,
  benchServers,
  BenchServers,
  benchServerUrl,
  percentile,
  table,
  token,
  wholeArg,
} from './support.js';

function options() {
  const { values } = parseArgs({
    options: {
      clients: { type: 'string', default: '200' },
      seconds: { type: 'string', default: '60' },
      recall: { type: 'string', default: '0.2' },
      warmup: { type: 'string', default: '2' },
      seed: { type: 'string', default: '1' },
      ramp: { type: 'string', default: '1' },
      settle: { type: 'string', default: '5' },
      server: { type: 'boolean', default: false },
      replicas: { type: 'string', default: '0' },
    },
  });
  const replicas = wholeArg('replicas', values.replicas, 0);
  const recallShare = Number(values.recall);
  if (!(recallShare >= 0 && recallShare <= 1)) throw new Error('--recall is a share, 0 to 1');
  const ramp = Number(values.ramp);
  if (!(ramp >= 0 && ramp <= 60)) throw new Error('--ramp is seconds, 0 to 60');
  const seconds = wholeArg('seconds', values.seconds, 1);
  const settle = Number(values.settle);
  if (!(settle >= 0 && settle < seconds))
    throw new Error('--settle is seconds, less than --seconds');
  return {
    clients: wholeArg('clients', values.clients, 1),
    seconds,
    settleMs: settle * 1000,
    recallShare,
    rampMs: ramp * 1000,
    /** Unmeasured sends per client first (and one recall): connections, JIT, caches. */
    warmup: wholeArg('warmup', values.warmup, 0),
    seed: wholeArg('seed', values.seed, 0),
    replicas,
    serverUrl: replicas > 0 ? undefined : benchServerUrl(values.server),
  };
}

/** The clients' thread: one for a whole run, told its phases one after another. */
class ClientsThread {
  private readonly worker = new Worker(new URL('./load-clients.js', import.meta.url));

  phase<P extends LoadInput['phase']>(
    input: Extract<LoadInput, { phase: P }>,
  ): Promise<Extract<LoadOutput, { phase: P }>> {
    return new Promise((resolve, reject) => {
      const done = () => {
        this.worker.off('message', onMessage);
        this.worker.off('error', onError);
        this.worker.off('exit', onExit);
      };
      const onMessage = (out: Extract<LoadOutput, { phase: P }>) => {
        done();
        resolve(out);
      };
      const onError = (err: Error) => {
        done();
        reject(err);
      };
      const onExit = (code: number) => {
        done();
        reject(new Error(`the clients' thread exited with ${code}`));
      };
      this.worker.on('message', onMessage);
      this.worker.on('error', onError);
      this.worker.on('exit', onExit);
      this.worker.postMessage(input);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '-');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

function row(name: string, calls: CallResult[], elapsedS: number): Record<string, string> {
  const ok = calls
    .filter((c) => !c.error)
    .map((c) => c.ms)
    .sort((a, b) => a - b);
  return {
    calls: name,
    'answered/s': (ok.length / elapsedS).toFixed(1),
    'p50 ms': ms(percentile(ok, 50)),
    'p95 ms': ms(percentile(ok, 95)),
    'p99 ms': ms(percentile(ok, 99)),
    'max ms': ms(ok[ok.length - 1] ?? NaN),
    errors: String(calls.length - ok.length),
  };
}

type Options = ReturnType<typeof options>;

async function main(): Promise<void> {
  const opts = options();
  if (opts.replicas === 0) {
    await measure(opts, opts.serverUrl ?? null, null);
    return;
  }
  const servers = await benchServers(opts.replicas);
  try {
    const none = await measure(opts, servers.url, null);
    const some = await measure(opts, servers.url, servers);
    const label = `${opts.replicas} replica${opts.replicas > 1 ? 's' : ''}`;
    const side = (op: string, a: Record<string, string>, b: Record<string, string>) => ({
      calls: op,
      'answered/s, none': a['answered/s'],
      [`answered/s, ${label}`]: b['answered/s'],
      'p95 ms, none': a['p95 ms'],
      [`p95 ms, ${label}`]: b['p95 ms'],
      'p99 ms, none': a['p99 ms'],
      [`p99 ms, ${label}`]: b['p99 ms'],
      'errors, none': a.errors,
      [`errors, ${label}`]: b.errors,
    });
    console.log(
      [
        '',
        `Side by side: the same run on the primary alone, then with ${label} taking the reads`,
        '',
        table(none.map((r, i) => side(r.calls, r, some[i]))),
      ].join('\n'),
    );
  } finally {
    servers.stop();
  }
}

/** One run on a fresh database; prints its report and answers its rows (all, send, recall). */
async function measure(
  opts: Options,
  serverUrl: string | null,
  replicas: BenchServers | null,
): Promise<Record<string, string>[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'keepsake-load-'));
  const server = serverUrl ? await benchDatabase(serverUrl) : null;
  if (replicas) await replicas.caughtUp();
  // The service's own pool sizes (the other benches' 20 each let more sends run at once, and
  // each of them then waits longer for the event loop: recall too).
  const pools = {
    DATABASE_POOL_SIZE:
      process.env.DATABASE_POOL_SIZE ?? databaseVariables.DATABASE_POOL_SIZE.default!,
    DATABASE_READ_POOL_SIZE:
      process.env.DATABASE_READ_POOL_SIZE ?? databaseVariables.DATABASE_READ_POOL_SIZE.default!,
  };
  const config = benchConfig(dataDir, server, {
    ...(server ? pools : {}),
    ...(replicas && server
      ? { DATABASE_REPLICA_URLS: replicas.replicaUrls(server.url).join(',') }
      : {}),
  });
  const bootStarted = performance.now();
  const app = await createApp(config);
  const clients = new ClientsThread();
  try {
    // Idle keep-alive sockets outlive the longest wait: otherwise the server may close one just
    // as a client reuses it (ECONNRESET), a race of the bench's, not of the service's work.
    (app.getHttpServer() as Server).keepAliveTimeout = 300_000;
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const bootMs = performance.now() - bootStarted;
    const url = `http://127.0.0.1:${port}/graphql`;
    const users: LoadClient[] = Array.from({ length: opts.clients }, (_, c) => ({
      bearer: token(`load-user-${c}`),
    }));

    const loadBefore = load();
    const setupStarted = performance.now();
    const { clients: ready } = await clients.phase({
      phase: 'setup',
      url,
      clients: users,
      warmup: opts.warmup,
    });
    const setupS = (performance.now() - setupStarted) / 1000;

    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const run = await clients.phase({
      phase: 'run',
      url,
      clients: ready,
      seconds: opts.seconds,
      recallShare: opts.recallShare,
      rampMs: opts.rampMs,
      seed: opts.seed,
    });
    loop.disable();
    const loadAfter = load();
    const elapsedS = run.elapsedMs / 1000;

    const [{ n: backlog }] = (await app
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM jobs WHERE status IN ('PENDING', 'RUNNING')`)) as {
      n: number;
    }[];
    const { stored } = await clients.phase({ phase: 'count', url, clients: ready });
    let lost = 0;
    let leftBehind = 0;
    stored.forEach((n, c) => {
      const expected = opts.warmup + run.sent[c];
      lost += Math.max(0, expected - n);
      leftBehind += Math.max(0, n - expected);
    });

    const errors = new Map<string, number>();
    const hints: number[] = [];
    for (const c of run.calls) {
      if (!c.error) continue;
      errors.set(c.error, (errors.get(c.error) ?? 0) + 1);
      if (c.retryAfterSeconds) hints.push(c.retryAfterSeconds);
    }
    const steady = run.calls.filter((c) => c.atMs >= opts.settleMs);
    const steadyS = elapsedS - opts.settleMs / 1000;
    const byOp = (calls: CallResult[], op: CallResult['op']) => calls.filter((c) => c.op === op);
    const rows = [
      row('all', steady, steadyS),
      row('sendMessage', byOp(steady, 'sendMessage'), steadyS),
      row('recall', byOp(steady, 'recall'), steadyS),
    ];
    const first = run.calls.filter((c) => c.atMs < opts.settleMs);
    const startLine = (op: CallResult['op']) => {
      const r = row(op, byOp(first, op), opts.settleMs / 1000);
      return `${op} p50 ${r['p50 ms']}, p99 ${r['p99 ms']}, max ${r['max ms']} ms`;
    };
    console.log(
      [
        'Keepsake load benchmark (sendMessage and recall over GraphQL/HTTP)',
        `  clients            ${opts.clients}, each its own user, legacy and conversation, in a thread of their own (each waits for its previous answer)`,
        `  mix                ${Math.round((1 - opts.recallShare) * 100)}% sendMessage (AGENT_REPLY=off), ${Math.round(opts.recallShare * 100)}% recall, for ${opts.seconds} s (the table: from the ${opts.settleMs / 1000}th s on), the first calls spread over ${opts.rampMs / 1000} s; ${opts.warmup} warm-up sends and a recall per client first (${setupS.toFixed(1)} s)`,
        `  database           ${server ? `PostgreSQL server (DATABASE_URL), pool of ${config.env.DATABASE_POOL_SIZE} for writes, ${config.env.DATABASE_READ_POOL_SIZE} for reads${replicas ? `; reads on ${config.env.DATABASE_REPLICA_URLS?.length} replica(s) (DATABASE_REPLICA_URLS)` : ' on the primary'}` : `embedded PGlite in a fresh ${dataDir}, in the ${config.env.EMBEDDED_DATABASE_THREAD === 'worker' ? 'thread of its own' : "service's thread"}, requests refused after ${config.env.DATABASE_QUEUE_TIMEOUT_MS} ms`}; background jobs in the service process`,
        `  runtime            node ${process.version}, ${process.platform}/${process.arch}; boot ${ms(bootMs)} ms`,
        `  load average       ${loadBefore} before, ${loadAfter} after (1, 5, 15 min)`,
        '',
        table(rows),
        '',
        `the first ${opts.settleMs / 1000} s      ${first.length} calls asked while the clients started, not in the table: ${startLine('sendMessage')}; ${startLine('recall')}`,
        `errors             ${errors.size ? [...errors].map(([code, n]) => `${code} ${n}`).join(', ') : 'none'}` +
          (hints.length
            ? ` (retryAfterSeconds ${Math.min(...hints)} to ${Math.max(...hints)})`
            : ''),
        `lost writes        ${lost} (sends answered without error, not in the log); ${leftBehind} refused or failed sends in the log`,
        `background jobs    ${backlog} pending or running when the run ended`,
        `event-loop delay   p50 ${ms(loop.percentile(50) / 1e6)} ms, p99 ${ms(loop.percentile(99) / 1e6)} ms, max ${ms(loop.max / 1e6)} ms (the service's, during the run)`,
        `wall               ${elapsedS.toFixed(1)} s`,
      ].join('\n'),
    );
    if (run.firstError) console.error(`first error: ${run.firstError}`);
    if (lost > 0 || leftBehind > 0) process.exitCode = 1;
    return rows;
  } finally {
    await clients.close();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
    await server?.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
