import { HEALTH_TOKEN, readyDetails } from '../support/health.js';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { children, ensureBuilt } from '../support/service-process.js';
import { GENEROUS_LIMITS, signToken, TEST_JWT_SECRET } from '../support/test-app.js';
import { ON_SERVER } from '../support/test-database.js';
import { call, Gate, Outcome, readTurns } from './support/clients.js';
import {
  acknowledgedWritesHold,
  backgroundWorkSettled,
  settledInDatabase,
  withDatabase,
} from './support/checks.js';
import { Ledger, Member } from './support/family.js';
import { PgServer } from './support/pg-server.js';
import { report, settle } from './support/report.js';
import {
  faultDir,
  FaultService,
  freePort,
  keeping,
  keepOnFailure,
  seededRandom,
  sleep,
} from './support/service.js';

const DOWN_MS = 10_000;

/**
 * The PostgreSQL server stopped at once (`pg_ctl stop -m immediate`) under load and started
 * again ten seconds later: requests fail fast with UNAVAILABLE and a retry hint, readiness says
 * the database is down, subscriptions stay open, and the service recovers by itself (pool,
 * LISTEN, jobs) with nothing acknowledged lost. Only a server can go away like this: the
 * embedded database's own crash is test/e2e/database-crash.e2e-spec.ts.
 */
(ON_SERVER ? describe : describe.skip)('the database server going away under load', () => {
  const dir = faultDir('outage');
  let server: PgServer;
  let service: FaultService;

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    try {
      server?.stop();
    } catch {
      // already stopped
    }
    keepOnFailure(dir);
  });

  it('fails fast while it is away and recovers by itself, losing nothing acknowledged', () =>
    keeping(async () => {
      ensureBuilt();
      server = new PgServer(await freePort(), join(dir, 'pg'));
      const databaseUrl = server.start();
      const env = {
        ...GENEROUS_LIMITS,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        DATA_DIR: join(dir, 'data'),
        DATABASE_URL: databaseUrl,
        JWT_SECRET: TEST_JWT_SECRET,
        LOG_LEVEL: 'info',
        METRICS_ENABLED: 'true',
        METRICS_DB_REFRESH_MS: '0',
        METRICS_TOKEN: HEALTH_TOKEN,
        SUMMARIZATION_THRESHOLD: '12',
        SUMMARIZATION_BATCH: '6',
        SEARCH_KINDS: 'false',
      };
      service = new FaultService(env, join(dir, 'logs'));
      service.spawn();
      await service.ready();

      const ledger = new Ledger();
      const gate = new Gate();
      const members = await Promise.all(
        [0, 1, 2, 3].map(
          async (i) =>
            new Member(
              `o${i}`,
              await signToken(`outage-${i}`, { email: `o${i}@example.com` }, { expiresIn: '1h' }),
              ledger,
              seededRandom(1000 + i),
              () => service.base,
              gate,
            ),
        ),
      );
      for (const m of members) await m.setUp();
      const watcher = await signToken('outage-watcher', {}, { expiresIn: '1h' });
      const legacy = await call<{ createLegacy: { id: string } }>(
        service.base,
        watcher,
        'mutation { createLegacy(input: { name: "Watched" }) { id } }',
        {},
      );
      const conversation = await call<{ startConversation: { id: string } }>(
        service.base,
        watcher,
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacy.kind === 'ok' ? legacy.data.createLegacy.id : '' },
      );
      const conversationId =
        conversation.kind === 'ok' ? conversation.data.startConversation.id : '';

      // A subscription open across the outage.
      const events: string[] = [];
      const closes: { code: number; reason: string; at: number }[] = [];
      let connections = 0;
      const ws = createClient({
        url: `${service.base.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${watcher}` },
        // As Apollo's and urql's graphql-ws links do: reconnect and subscribe again.
        retryAttempts: 10,
        retryWait: () => sleep(300),
        on: {
          connected: () => connections++,
          closed: (e) => {
            const { code, reason } = e as { code: number; reason: string };
            closes.push({ code, reason, at: performance.now() });
          },
        },
      });
      const eventErrors: unknown[] = [];
      let completed = false;
      ws.subscribe(
        {
          query: `subscription($c: ID!) { messageAdded(conversationId: $c) { content } }`,
          variables: { c: conversationId },
        },
        {
          next: (e) => {
            if (e.errors) eventErrors.push(...e.errors);
            else
              events.push((e.data as { messageAdded: { content: string } }).messageAdded.content);
          },
          error: (err) => eventErrors.push(err),
          complete: () => (completed = true),
        },
      );
      const watch = (content: string) =>
        call(
          service.base,
          watcher,
          `mutation($c: ID!, $t: String!) { sendMessage(input: {
          conversationId: $c, content: $t, clientMessageId: $t }) { message { id } } }`,
          {
            c: conversationId,
            t: content,
          },
        );
      await sleep(500);
      expect((await watch('before the outage')).kind).toBe('ok');

      let stopping = false;
      const loops = members.map((m) => m.run(() => stopping));
      await sleep(3000);

      // The server stops at once; for ten seconds every request must still be answered, fast.
      server.crash();
      const downAt = performance.now();
      const probes: { ms: number; outcome: Outcome<unknown> }[] = [];
      let readyWhileDown: { status: number; body: unknown } | null = null;
      while (performance.now() - downAt < DOWN_MS) {
        const started = performance.now();
        const outcome = await call(
          service.base,
          watcher,
          '{ me { id } legacies(first: 5) { edges { node { id } } } }',
          {},
          30_000,
        );
        probes.push({ ms: performance.now() - started, outcome });
        if (!readyWhileDown) {
          readyWhileDown = await readyDetails(service.base);
        }
        await sleep(250);
      }
      server.start();
      const upAt = performance.now();
      // Back by itself: the first write that succeeds, with no restart of the service.
      let writable: Outcome<unknown> = { kind: 'lost', error: '' };
      while (writable.kind !== 'ok' && performance.now() - upAt < 60_000) {
        writable = await watch(`after the outage ${probes.length}`);
        if (writable.kind !== 'ok') await sleep(200);
      }
      const recoveredMs = performance.now() - upAt;
      expect(writable.kind).toBe('ok');
      await sleep(3000);
      stopping = true;
      await Promise.all(loops);
      for (const m of members) await m.resendUnanswered();

      // While it was away: refusals with a reason and a retry hint, none slower than 5 s.
      const slowest = Math.max(...probes.map((p) => p.ms));
      const failed = probes.filter((p) => p.outcome.kind !== 'ok');
      expect(failed.length).toBeGreaterThan(0);
      for (const p of failed) {
        expect(p.outcome).toMatchObject({
          kind: 'refused',
          code: 'UNAVAILABLE',
          reason: 'DATABASE_UNAVAILABLE',
        });
      }
      expect(slowest).toBeLessThan(5000);
      expect(readyWhileDown).toEqual({
        status: 503,
        body: expect.objectContaining({ status: 'unavailable', database: { status: 'down' } }),
      });
      // The subscription stayed open while the database was away; once events flowed again,
      // its socket was closed with a reason a client acts on (events may have been missed), and
      // the client subscribed again by itself, refetched, and receives what comes next.
      expect(closes.filter((c) => c.at < upAt)).toEqual([]);
      expect(completed).toBe(false);
      for (const e of eventErrors) {
        expect(e).toMatchObject({
          extensions: { code: 'UNAVAILABLE', reason: 'DATABASE_UNAVAILABLE' },
        });
      }
      for (let i = 0; i < 100 && (closes.length === 0 || connections < 2); i++) await sleep(100);
      expect(closes).toEqual([
        {
          code: 1012,
          reason: 'Events were interrupted: reconnect, subscribe again and refetch.',
          at: expect.any(Number),
        },
      ]);
      expect(connections).toBe(2);
      const refetched = await readTurns(service.base, watcher, conversationId);
      expect(refetched.map((t) => t.clientMessageId)).toContain(
        (writable.kind === 'ok' && `after the outage ${probes.length}`) || '',
      );
      expect((await watch('after the resubscription')).kind).toBe('ok');
      for (let i = 0; i < 50 && !events.includes('after the resubscription'); i++) await sleep(100);
      expect(events).toContain('before the outage');
      expect(events).toContain('after the resubscription');
      expect(completed).toBe(false);
      await ws.dispose();

      // Every acknowledged turn readable, and the jobs resumed and settled.
      const turns = await readTurns(service.base, watcher, conversationId);
      expect(turns.map((t) => t.clientMessageId)).toContain('before the outage');
      const settledIn = await settle(service.base);
      await settledInDatabase(databaseUrl);
      await service.stop();
      const problems = await withDatabase({ DATABASE_URL: databaseUrl }, async (query) => [
        ...(await acknowledgedWritesHold(query, ledger)),
        ...(await backgroundWorkSettled(query)),
      ]);
      expect(ledger.anomalies.filter((a) => !a.includes('UNAVAILABLE'))).toEqual([]);
      expect(problems).toEqual([]);
      report(
        `server outage: ${DOWN_MS / 1000} s down under load; ${failed.length} of ${probes.length} probes refused ` +
          `(UNAVAILABLE, DATABASE_UNAVAILABLE), slowest answer ${Math.round(slowest)} ms; first write ` +
          `${Math.round(recoveredMs)} ms after the server was back, without a restart; subscription kept; ` +
          `${ledger.acknowledged} acknowledged writes all there; jobs settled ${Math.round(settledIn / 1000)} s later`,
      );
    }));
});
