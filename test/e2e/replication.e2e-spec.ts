import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { children, ensureBuilt } from '../support/service-process.js';
import { GENEROUS_LIMITS, signToken, subscribe, TEST_JWT_SECRET } from '../support/test-app.js';
import { ON_SERVER } from '../support/test-database.js';
import {
  acknowledgedWritesHold,
  backgroundWorkSettled,
  withDatabase,
} from '../faults/support/checks.js';
import { call, Gate, Outcome } from '../faults/support/clients.js';
import { Ledger, Member } from '../faults/support/family.js';
import { PgServer } from '../faults/support/pg-server.js';
import { gauge, report, settle } from '../faults/support/report.js';
import {
  faultDir,
  FaultService,
  freePort,
  keeping,
  keepOnFailure,
  seededRandom,
  sleep,
} from '../faults/support/service.js';

/**
 * Two servers of the test's own (test/support/postgres.sh): a primary and its streaming hot
 * standby, the service in front with DATABASE_URL naming both hosts (target_session_attrs=
 * read-write) and DATABASE_REPLICA_URLS naming both too (whichever is a standby takes reads).
 * Reads go to the replica and a member reads their own writes; a replica paused or down is out
 * of rotation and back by itself; the primary killed under load and the standby promoted: the
 * service writes again without a restart, with synchronous replication no acknowledged turn is
 * lost and the jobs settle once; the old primary rejoins with pg_rewind, and the drill runs again
 * the other way without synchronous replication, its loss measured.
 *
 * It needs the packaged server and starts its own: it runs in the server pass only (once).
 *
 * @pass server: replication is a server's.
 */
if (!ON_SERVER) {
  process.stderr.write(
    '\n[replication] skipped in the embedded pass: it runs once, in the server pass (npm run test:server), on servers of its own\n',
  );
}

(ON_SERVER ? describe : describe.skip)('streaming replicas and failover', () => {
  const dir = faultDir('replication');
  let a: PgServer;
  let b: PgServer;
  let service: FaultService;
  let urlA = '';
  let urlB = '';
  let token = '';
  let legacyId = '';

  const sql = async <T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end();
    }
  };
  const metrics = async () => (await fetch(`${service.base}/metrics`)).text();
  /** Whether the service's /metrics shows the replica on `server` in that state now. */
  const inRotation = async (server: PgServer, state: string) =>
    new RegExp(
      `keepsake_database_replica_in_rotation\\{replica="127\\.0\\.0\\.1:${server.port}/keepsake",state="${state}"\\} `,
    ).test(await metrics());
  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 20_000) => {
    const started = performance.now();
    // A poll that fails (a kept-alive socket the service closed as it was reused, on a loaded
    // machine) is a "not yet": the deadline still bounds it.
    while (!(await check().catch(() => false))) {
      if (performance.now() - started > timeoutMs)
        throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await sleep(100);
    }
    return performance.now() - started;
  };
  const gql = <T>(query: string, variables: Record<string, unknown> = {}) =>
    call<T>(service.base, token, query, variables);
  /** Adds a fact and lists the legacy's facts at once: the list must hold it. */
  const writeThenRead = async (content: string) => {
    const added = await gql<{ addFact: { id: string } }>(
      `mutation($l: ID!, $c: String!) { addFact(input: { legacyId: $l, content: $c, category: HOBBY }) { id } }`,
      { l: legacyId, c: `He liked ${content}.` },
    );
    expect(added).toMatchObject({ kind: 'ok' });
    const listed = await gql<{ facts: { edges: { node: { id: string } }[] } }>(
      `query($l: ID!) { facts(legacyId: $l, first: 100) { edges { node { id } } } }`,
      { l: legacyId },
    );
    expect(listed).toMatchObject({ kind: 'ok' });
    const id = added.kind === 'ok' ? added.data.addFact.id : '';
    return listed.kind === 'ok' && listed.data.facts.edges.some((e) => e.node.id === id);
  };
  const reads = async (route: string) =>
    gauge(await metrics(), 'keepsake_database_reads_total', `route="${route}"`);

  /**
   * Clients send turns, the primary is killed and the standby promoted: what came of it. With
   * `lagMs`, the standby is stopped that long before the kill (a standby restarting, or cut off by
   * a broken link) and started again after it: it is that far behind when it takes over.
   */
  const drill = async (primary: PgServer, standby: PgServer, seed: number, lagMs = 0) => {
    const ledger = new Ledger();
    const gate = new Gate();
    const members = await Promise.all(
      [0, 1].map(
        async (i) =>
          new Member(
            `d${seed}-${i}`,
            await signToken(`drill-${seed}-${i}`, {}, { expiresIn: '1h' }),
            ledger,
            seededRandom(seed + i),
            () => service.base,
            gate,
          ),
      ),
    );
    for (const m of members) await m.setUp();
    let stopping = false;
    const loops = members.map((m) => m.run(() => stopping));
    await sleep(3000);
    const acked = () => [...ledger.turns.values()].filter((t) => t.acked).length;
    let ackedWhileBehind = 0;
    let ackedAtHold = 0;
    if (lagMs > 0) {
      standby.stop();
      ackedAtHold = acked();
      await sleep(lagMs);
      ackedWhileBehind = acked() - ackedAtHold;
    }
    const ackedBefore = acked();
    primary.crash();
    if (lagMs > 0) standby.start();
    const killedAt = performance.now();
    standby.promote();
    const promotedMs = performance.now() - killedAt;
    let written: Outcome<unknown> = { kind: 'lost', error: '' };
    while (written.kind !== 'ok' && performance.now() - killedAt < 60_000) {
      written = await gql(
        `mutation($l: ID!, $c: String!) { addFact(input: { legacyId: $l, content: $c, category: HOBBY }) { id } }`,
        { l: legacyId, c: `after the failover ${seed}` },
      );
      if (written.kind !== 'ok') await sleep(50);
    }
    const writesAgainMs = performance.now() - killedAt;
    expect(written.kind).toBe('ok');
    await sleep(2000);
    stopping = true;
    await Promise.all(loops);
    for (const m of members) await m.resendUnanswered();
    const settledMs = await settle(service.base, 240_000);
    const newPrimary = standby === a ? urlA : urlB;
    const check = () =>
      withDatabase({ DATABASE_URL: newPrimary, DATA_DIR: join(dir, 'data') }, async (query) => ({
        acknowledged: await acknowledgedWritesHold(query, ledger),
        background: await backgroundWorkSettled(query),
      }));
    // A job that failed while no server took writes was rescheduled (JOBS_RETRY_BASE_MS):
    // settle() waits for due work only; wait for the retries too.
    let problems = await check();
    for (let i = 0; i < 60 && problems.background.length > 0; i++) {
      await sleep(1000);
      problems = await check();
    }
    const turns = [...ledger.turns.values()].filter((t) => t.acked).length;
    const lost = problems.acknowledged.filter((p) => /^acknowledged turn .* is missing$/.test(p));
    return {
      ledger,
      problems,
      turns,
      lost,
      ackedBefore,
      ackedAtHold,
      ackedWhileBehind,
      promotedMs,
      writesAgainMs,
      settledMs,
    };
  };

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const server of [a, b]) {
      try {
        server?.stop();
      } catch {
        // already stopped
      }
    }
    keepOnFailure(dir);
  });

  it(
    'reads from the replica, and a member reads their own writes',
    () =>
      keeping(async () => {
        ensureBuilt();
        a = new PgServer(await freePort(), join(dir, 'a'));
        b = new PgServer(await freePort(), join(dir, 'b'));
        urlA = a.start();
        urlB = b.replicaOf(a, 'b');
        // Synchronous: a commit is acknowledged once the standby has it (synchronous_commit = on).
        await sql(urlA, `ALTER SYSTEM SET synchronous_standby_names = 'b'`);
        await sql(urlA, `SELECT pg_reload_conf()`);
        const env = {
          ...GENEROUS_LIMITS,
          PORT: String(await freePort()),
          HOST: '127.0.0.1',
          DATA_DIR: join(dir, 'data'),
          DATABASE_URL: `postgres://postgres@127.0.0.1:${a.port},127.0.0.1:${b.port}/keepsake?target_session_attrs=read-write`,
          DATABASE_REPLICA_URLS: `${urlA},${urlB}`,
          DATABASE_REPLICA_CHECK_MS: '200',
          DATABASE_REPLICA_MAX_LAG_MS: '500',
          JWT_SECRET: TEST_JWT_SECRET,
          LOG_LEVEL: 'info',
          METRICS_ENABLED: 'true',
          METRICS_DB_REFRESH_MS: '0',
          SUMMARIZATION_THRESHOLD: '12',
          SUMMARIZATION_BATCH: '6',
          SEARCH_KINDS: 'false',
          JOBS_RETRY_BASE_MS: '200',
          // After an asynchronous failover a job's claim may survive without its finish (lost
          // with the last commits): it is handed back when its lease runs out.
          JOBS_LEASE_MS: '15000',
        };
        service = new FaultService(env, join(dir, 'logs'));
        service.spawn();
        await service.ready();
        token = await signToken('replica-reader', {}, { expiresIn: '1h' });
        const legacy = await gql<{ createLegacy: { id: string } }>(
          'mutation { createLegacy(input: { name: "Replicated" }) { id } }',
        );
        legacyId = legacy.kind === 'ok' ? legacy.data.createLegacy.id : '';
        await waitFor('the standby in rotation', () => inRotation(b, 'in'));
        expect(await inRotation(a, 'not-standby')).toBe(true);

        const before = await reads('replica');
        for (let i = 0; i < 10; i++) expect(await writeThenRead(`fact ${i}`)).toBe(true);
        expect(await reads('replica')).toBeGreaterThanOrEqual(before + 10);
        const scrape = await metrics();
        expect(scrape).toMatch(
          new RegExp(
            `keepsake_database_replica_lag_seconds\\{replica="127.0.0.1:${b.port}/keepsake"\\} [0-9.e-]+`,
          ),
        );
        // Recall runs on the replica too.
        const recalled = await gql<{ recall: { edges: unknown[] } }>(
          'query($l: ID!) { recall(legacyId: $l, query: "fact") { edges { node { id } } } }',
          { l: legacyId },
        );
        expect(recalled.kind).toBe('ok');
      }),
    240_000,
  );

  it(
    'takes a lagging or stopped replica out of rotation, reads from the primary meanwhile, and takes it back by itself',
    () =>
      keeping(async () => {
        // Replay paused: the standby still receives the WAL (commits are acknowledged) but falls
        // behind; reads wait at most DATABASE_REPLICA_MAX_LAG_MS for it, then go to the primary.
        await sql(urlB, 'SELECT pg_wal_replay_pause()');
        const behind = await reads('primary_replica_behind');
        expect(await writeThenRead('while replay is paused')).toBe(true);
        expect(await reads('primary_replica_behind')).toBeGreaterThan(behind);
        for (let i = 0; i < 5; i++) await writeThenRead(`paused ${i}`);
        await waitFor('the paused standby out of rotation', () => inRotation(b, 'lagging'));
        const noReplica = await reads('primary_no_replica');
        expect(await writeThenRead('while it lags')).toBe(true);
        expect(await reads('primary_no_replica')).toBeGreaterThan(noReplica);
        await sql(urlB, 'SELECT pg_wal_replay_resume()');
        const backMs = await waitFor('the standby back in rotation', () => inRotation(b, 'in'));

        // Stopped: out (down), the primary serves, started again: back. With its one synchronous
        // standby down the primary would hold every commit (that is what synchronous means): the
        // operator's choice then is to wait or to go asynchronous meanwhile, as here.
        await sql(urlA, `ALTER SYSTEM SET synchronous_standby_names = ''`);
        await sql(urlA, `SELECT pg_reload_conf()`);
        b.stop();
        expect(await writeThenRead('while the standby is down')).toBe(true);
        await waitFor('the stopped standby out of rotation', () => inRotation(b, 'down'));
        b.replicaOf(a, 'b');
        const upMs = await waitFor('the restarted standby in rotation', () => inRotation(b, 'in'));
        const replica = await reads('replica');
        expect(await writeThenRead('with the standby back')).toBe(true);
        expect(await reads('replica')).toBeGreaterThan(replica);
        await sql(urlA, `ALTER SYSTEM SET synchronous_standby_names = 'b'`);
        await sql(urlA, `SELECT pg_reload_conf()`);
        const [sync] = await sql<{ sync_state: string }>(
          urlA,
          `SELECT sync_state FROM pg_stat_replication WHERE application_name = 'b'`,
        );
        expect(sync.sync_state).toBe('sync');
        report(
          `replicas: back in rotation ${Math.round(backMs)} ms after replay resumed, ${Math.round(upMs)} ms after the standby started again`,
        );
      }),
    240_000,
  );

  it(
    'fails over with synchronous replication: writes again without a restart, no acknowledged turn lost, jobs settled once, subscriptions follow',
    () =>
      keeping(async () => {
        // A subscriber across the failover: its instance listens on the new primary by itself,
        // closes the socket (1012: events may have been missed), and the client subscribes again.
        const started = await gql<{ startConversation: { id: string } }>(
          'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
          { l: legacyId },
        );
        const watched = started.kind === 'ok' ? started.data.startConversation.id : '';
        const closes: number[] = [];
        const ws = createClient({
          url: `${service.base.replace('http', 'ws')}/graphql`,
          webSocketImpl: WebSocket,
          connectionParams: { authorization: `Bearer ${token}` },
          retryAttempts: 20,
          retryWait: () => sleep(300),
          on: { closed: (e) => closes.push((e as { code: number }).code) },
        });
        const events = subscribe<{ messageAdded: { content: string } }>(
          ws,
          'subscription($c: ID!) { messageAdded(conversationId: $c) { content } }',
          { c: watched },
        );
        await events.ready;

        const r = await drill(a, b, 4000);
        for (let i = 0; i < 100 && !closes.includes(1012); i++) await sleep(100);
        expect(closes).toContain(1012);
        await sleep(1000);
        const sent = await gql(
          `mutation($c: ID!) { sendMessage(input: { conversationId: $c, content: "Heard after the failover." }) { message { id } } }`,
          { c: watched },
        );
        expect(sent.kind).toBe('ok');
        const seen = await events.waitFor(1, 15_000);
        expect(seen.map((e) => e.data?.messageAdded.content)).toContain(
          'Heard after the failover.',
        );
        await ws.dispose();
        expect(r.turns).toBeGreaterThan(0);
        expect(r.lost).toEqual([]);
        expect(r.problems.acknowledged).toEqual([]);
        expect(r.problems.background).toEqual([]);
        expect(r.ledger.anomalies.filter((x) => !x.includes('UNAVAILABLE'))).toEqual([]);
        expect(r.writesAgainMs).toBeLessThan(15_000);
        // A member reads their own writes on the new primary too.
        expect(await writeThenRead('after the failover, read back')).toBe(true);
        report(
          `failover (synchronous_standby_names = 'b'): service writes again ${Math.round(r.writesAgainMs)} ms after the kill ` +
            `(promotion took ${Math.round(r.promotedMs)} ms), no restart; ${r.turns} turns acknowledged ` +
            `(${r.ackedBefore} before the kill), ${r.lost.length} lost; jobs settled ${Math.round(r.settledMs / 1000)} s later, none twice`,
        );
      }),
    240_000,
  );

  it(
    'rejoins the old primary as a standby with pg_rewind, and fails back without synchronous replication, measuring the loss',
    () =>
      keeping(async () => {
        a.rejoin(b, 'a');
        const [row] = await sql<{ standby: boolean }>(
          urlA,
          'SELECT pg_is_in_recovery() AS standby',
        );
        expect(row.standby).toBe(true);
        await waitFor('the rewound primary in rotation', () => inRotation(a, 'in'), 30_000);
        expect(await inRotation(b, 'not-standby')).toBe(true);
        expect(await writeThenRead('read from the rejoined standby')).toBe(true);
        const [copied] = await sql<{ n: number }>(
          urlA,
          `SELECT count(*)::int AS n FROM facts WHERE content = 'He liked read from the rejoined standby.'`,
        );
        expect(copied.n).toBe(1);

        // The promoted standby runs with synchronous_standby_names = '' (postgres.sh): asynchronous.
        const r = await drill(b, a, 5000);
        expect(r.writesAgainMs).toBeLessThan(15_000);
        expect(r.turns).toBeGreaterThan(0);
        // What asynchronous replication may lose is the last commits the standby had not received.
        const other = r.problems.acknowledged.filter((p) => !r.lost.includes(p));
        report(
          `failover (asynchronous): service writes again ${Math.round(r.writesAgainMs)} ms after the kill ` +
            `(promotion took ${Math.round(r.promotedMs)} ms); ` +
            `${r.turns} turns acknowledged, ${r.lost.length} lost; other differences: ${other.length ? other.join('; ') : 'none'}; ` +
            `background work: ${r.problems.background.length ? r.problems.background.join('; ') : 'settled, none twice'}`,
        );
      }),
    240_000,
  );

  it(
    'measures what asynchronous replication loses when the standby is behind at the kill',
    () =>
      keeping(async () => {
        // b (the old primary) rewound and following a, which runs asynchronous (postgres.sh).
        b.rejoin(a, 'b');
        await waitFor('the rewound standby in rotation', () => inRotation(b, 'in'), 30_000);
        const r = await drill(a, b, 6000, 2000);
        expect(r.writesAgainMs).toBeLessThan(30_000);
        // The turns lost are some of those acknowledged after the WAL sender was held, no more.
        expect(r.ackedWhileBehind).toBeGreaterThan(0);
        expect(r.lost.length).toBeGreaterThan(0);
        expect(r.lost.length).toBeLessThanOrEqual(r.turns - r.ackedAtHold);
        report(
          `failover (asynchronous, the standby 2 s behind, stopped before the kill): ${r.ackedWhileBehind} turns acknowledged while it was behind, ` +
            `${r.lost.length} lost of ${r.turns} acknowledged in all; service writes again ${Math.round(r.writesAgainMs)} ms after the kill ` +
            `(the standby started again and promoted meanwhile)`,
        );
      }),
    240_000,
  );
});
