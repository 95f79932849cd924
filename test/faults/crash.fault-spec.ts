import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { mintToken, ensureBuilt, children } from '../support/service-process.js';
import { GENEROUS_LIMITS, signToken, TEST_JWT_SECRET } from '../support/test-app.js';
import {
  dropServerDatabase,
  ON_SERVER,
  RUN_PREFIX,
  serverDatabaseUrl,
} from '../support/test-database.js';
import { call, Gate } from './support/clients.js';
import { acknowledgedWritesHold, backgroundWorkSettled, withDatabase } from './support/checks.js';
import { Ledger, Member } from './support/family.js';
import {
  faultDir,
  faultSeed,
  FaultService,
  freePort,
  keeping,
  keepOnFailure,
  seededRandom,
  sleep,
} from './support/service.js';
import { report, settle } from './support/report.js';

const SEED = faultSeed();
/** Kills on this database (the suite runs on both, so the run as a whole kills twice as often). */
const KILLS = Number(process.env.FAULT_KILLS ?? 10);
const MEMBERS = 6;
const where = ON_SERVER ? 'server' : 'embedded';

describe(`crash safety on the ${where} database`, () => {
  const dir = faultDir(`crash-${where}`);
  let databaseUrl: string | undefined;
  let service: FaultService;

  beforeAll(async () => {
    ensureBuilt();
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    if (ON_SERVER) {
      // An empty database, so that the first boot (killed on purpose) runs every migration.
      const name = `${RUN_PREFIX}faults_${process.pid}`;
      databaseUrl = serverDatabaseUrl(name);
      const admin = new pg.Client({ connectionString: serverDatabaseUrl('postgres') });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${name}"`);
      await admin.end();
    }
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    if (databaseUrl) await dropServerDatabase(new URL(databaseUrl).pathname.slice(1));
    keepOnFailure(dir);
  });

  it(`keeps every acknowledged write through ${KILLS} kills at random moments`, () =>
    keeping(async () => {
      const random = seededRandom(SEED);
      report(
        `crash safety, ${where} database: seed ${SEED} (FAULT_SEED=${SEED} replays it), ${KILLS} kills`,
      );
      const port = await freePort();
      const env: Record<string, string> = {
        ...GENEROUS_LIMITS,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: join(dir, 'data'),
        LOG_LEVEL: 'info',
        METRICS_ENABLED: 'true',
        METRICS_DB_REFRESH_MS: '0',
        // Kills are not the jobs' fault: they must finish however often they are interrupted.
        JOBS_MAX_ATTEMPTS: '100',
        JOBS_RETRY_BASE_MS: '200',
        // A killed process's jobs come back after their lease on a server.
        JOBS_LEASE_MS: '4000',
        JOBS_POLL_MS: '200',
        SUMMARIZATION_THRESHOLD: '12',
        SUMMARIZATION_BATCH: '6',
        SEARCH_KINDS: 'false',
        ...(databaseUrl ? { DATABASE_URL: databaseUrl, JWT_SECRET: TEST_JWT_SECRET } : {}),
      };
      service = new FaultService(env, join(dir, 'logs'));

      // Kill 1: during the very first boot (a fresh data directory or an empty database).
      service.spawn();
      await sleep(1500 + random() * 6000);
      await service.kill();
      let kills = 1;
      const toReady: number[] = [];
      service.spawn();
      await service.ready();

      const tokens: string[] = [];
      for (let i = 0; i < MEMBERS; i++) {
        const sub = `fault-member-${i}`;
        tokens.push(
          ON_SERVER
            ? await signToken(sub, { email: `${sub}@example.com` }, { expiresIn: '2h' })
            : mintToken({ DATA_DIR: env.DATA_DIR }, '--sub', sub, '--email', `${sub}@example.com`),
        );
      }
      const ledger = new Ledger();
      const gate = new Gate();
      const members = tokens.map(
        (token, i) =>
          new Member(`m${i}`, token, ledger, seededRandom(SEED + i + 1), () => service.base, gate),
      );
      for (const m of members) await m.setUp();

      let stopping = false;
      const loops = members.map((m) => m.run(() => stopping));
      // Half way, a restart switches the encoder: the re-embedding runs through the kills after it.
      const switchAt = Math.ceil(KILLS / 2);
      let extra: Record<string, string> = {};
      while (kills < KILLS) {
        const duringBoot = random() < 0.2;
        if (!duringBoot) await sleep(500 + random() * 3500);
        gate.close();
        const killedAt = performance.now();
        await service.kill();
        kills++;
        if (kills === switchAt) extra = { EMBEDDINGS_LOCAL_MODEL: 'e5-small-v2' };
        service.spawn(extra);
        if (duringBoot && kills < KILLS) {
          // Killed again while it boots: recovery itself interrupted.
          await sleep(200 + random() * 4000);
          continue;
        }
        await service.ready();
        toReady.push(performance.now() - killedAt);
        gate.release();
        for (const m of members) await m.resendUnanswered();
      }
      await sleep(3000);
      stopping = true;
      await Promise.all(loops);
      for (const m of members) await m.resendUnanswered();
      expect(members.flatMap((m) => m.unanswered)).toEqual([]);

      // The service still answers as the members expect, then settles its background work.
      const me = await call<{ me: { email: string } }>(
        service.base,
        tokens[0],
        '{ me { email } }',
        {},
      );
      expect(me.kind).toBe('ok');
      const settledIn = await settle(service.base);
      await service.stop();

      const problems = await withDatabase(
        databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: env.DATA_DIR },
        async (query) => [
          ...(await acknowledgedWritesHold(query, ledger)),
          ...(await backgroundWorkSettled(query)),
        ],
      );
      const sorted = [...toReady].sort((a, b) => a - b);
      report(
        `crash safety, ${where}: ${kills} kills survived; ${ledger.acknowledged} acknowledged writes checked ` +
          `(${ledger.counts.ok} answered, ${ledger.counts.refused} refused, ${ledger.counts.lost} lost with a kill); ` +
          `kill to /health/ready: median ${Math.round(sorted[Math.floor(sorted.length / 2)])} ms, ` +
          `max ${Math.round(sorted[sorted.length - 1])} ms over ${sorted.length} restarts; ` +
          `background work settled ${Math.round(settledIn / 1000)} s after the last kill's restart`,
      );
      expect(ledger.anomalies).toEqual([]);
      expect(problems).toEqual([]);
    }));
});
