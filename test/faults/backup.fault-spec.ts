import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { children, ensureBuilt, mintToken, ROOT, baseEnv } from '../support/service-process.js';
import { GENEROUS_LIMITS, signToken, TEST_JWT_SECRET } from '../support/test-app.js';
import {
  dropServerDatabase,
  ON_SERVER,
  RUN_PREFIX,
  serverDatabaseUrl,
} from '../support/test-database.js';
import { call, Gate, sha256 } from './support/clients.js';
import { acknowledgedWritesHold, withDatabase } from './support/checks.js';
import { Ledger, Member } from './support/family.js';
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

const exec = promisify(execFile);
const where = ON_SERVER ? 'server' : 'embedded';
const QUESTIONS = ['Where did he move?', 'Who sang in the choir?', 'the lake house', 'bread'];
const RECALL = `query($l: ID!, $q: String!) {
  recall(legacyId: $l, query: $q, first: 8) { edges { score node { id } } } }`;

/** The packaged server's programs (pg_dump, pg_restore), as docs/operations.md's procedure names them. */
function pgBin(): string {
  return execFileSync('bash', ['test/support/postgres.sh', 'bin'], { cwd: ROOT, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
}

async function createDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: serverDatabaseUrl('postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  return serverDatabaseUrl(name);
}

/**
 * A backup taken while clients write, with `npm run backup`, restored with `npm run restore`
 * into a new data directory (or an empty database): the restored service answers every write
 * acknowledged before the backup began (turns, facts, memories, stories with their original
 * files) and its recall ranks as the original's did.
 */
describe(`backups of the ${where} database`, () => {
  const dir = faultDir(`backup-${where}`);
  const databases: string[] = [];

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const name of databases) await dropServerDatabase(name);
    keepOnFailure(dir);
  });

  it('restores a backup taken under load to a service that answers what was acknowledged before it', () =>
    keeping(async () => {
      ensureBuilt();
      mkdirSync(dir, { recursive: true });
      const name = (n: string) => `${RUN_PREFIX}backup_${n}_${process.pid}`;
      const originalUrl = ON_SERVER ? await createDatabase(name('original')) : undefined;
      if (originalUrl) databases.push(name('original'));
      const env = (dataDir: string, url?: string): Record<string, string> => ({
        ...GENEROUS_LIMITS,
        PORT: String(0),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        SEARCH_KINDS: 'false',
        METRICS_ENABLED: 'true',
        METRICS_DB_REFRESH_MS: '0',
        ...(url ? { DATABASE_URL: url, JWT_SECRET: TEST_JWT_SECRET } : {}),
      });
      const originalEnv: Record<string, string> = {
        ...env(join(dir, 'original'), originalUrl),
        PORT: String(await freePort()),
      };
      const original = new FaultService(originalEnv, join(dir, 'logs-original'));
      original.spawn();
      await original.ready();

      const token = async (i: number) =>
        ON_SERVER
          ? signToken(`backup-${i}`, { email: `b${i}@example.com` }, { expiresIn: '1h' })
          : mintToken(
              { DATA_DIR: originalEnv.DATA_DIR },
              '--sub',
              `backup-${i}`,
              '--email',
              `b${i}@example.com`,
            );
      const before = new Ledger();
      const during = new Ledger();
      const gate = new Gate();
      const answers = async (base: string, t: string) => {
        const out: string[][] = [];
        for (const q of QUESTIONS) {
          const r = await call<{ recall: { edges: { node: { id: string } }[] } }>(base, t, RECALL, {
            l: quiet.legacyId,
            q,
          });
          if (r.kind !== 'ok') throw new Error(JSON.stringify(r));
          out.push(r.data.recall.edges.map((e) => e.node.id));
        }
        return out;
      };
      const quiet = new Member(
        'q',
        await token(0),
        before,
        seededRandom(5),
        () => original.base,
        gate,
      );
      await quiet.setUp();
      // One member's legacy is left alone while the backup is taken: its recall must not change.
      for (let i = 0; i < 40; i++) await quiet.act();
      // Its background work done, what recall answers about it stands still.
      await settle(original.base);
      const quietToken = await token(0);
      const recallBefore = await answers(original.base, quietToken);
      const busy = await Promise.all(
        [1, 2, 3].map(
          async (i) =>
            new Member(
              `b${i}`,
              await token(i),
              during,
              seededRandom(50 + i),
              () => original.base,
              gate,
            ),
        ),
      );
      for (const m of busy) await m.setUp();
      let stopping = false;
      const loops = busy.map((m) => m.run(() => stopping));
      await sleep(3000);
      // Writes acknowledged by now must be in the backup; those during it may or may not be.
      const acknowledgedBefore = snapshotLedger(during);
      const file = join(dir, 'keepsake.tar.gz');
      const cliEnv = baseEnv({ ...originalEnv, PG_BIN: pgBin() });
      const started = performance.now();
      const backup = await exec(
        process.execPath,
        ['dist/src/backups/cli/backup.js', '--out', file],
        {
          cwd: ROOT,
          env: cliEnv,
        },
      );
      const backupMs = performance.now() - started;
      stopping = true;
      await Promise.all(loops);
      expect(backup.stdout).toMatch(/^Backup written to /);
      // Restored into a new data directory (refused over one that is not empty) or database.
      const restoredUrl = ON_SERVER ? await createDatabase(name('restored')) : undefined;
      if (restoredUrl) databases.push(name('restored'));
      const target = ON_SERVER
        ? ['--database-url', restoredUrl!]
        : ['--data-dir', join(dir, 'restored')];
      const restoreStarted = performance.now();
      const restored = await exec(
        process.execPath,
        ['dist/src/backups/cli/restore.js', file, ...target],
        {
          cwd: ROOT,
          env: baseEnv({ PG_BIN: pgBin() }),
        },
      );
      const restoreMs = performance.now() - restoreStarted;
      expect(restored.stdout).toMatch(/^Restored the backup of .* all checked/);
      const again = await exec(
        process.execPath,
        ['dist/src/backups/cli/restore.js', file, ...target],
        {
          cwd: ROOT,
          env: baseEnv({ PG_BIN: pgBin() }),
        },
      ).then(
        () => null,
        (err: { code: number; stderr: string }) => err,
      );
      expect(again?.code).toBe(2);
      expect(again?.stderr).toMatch(ON_SERVER ? /has tables/ : /is not empty/);

      const copyEnv: Record<string, string> = {
        ...env(join(dir, 'restored'), restoredUrl),
        PORT: String(await freePort()),
      };
      const copy = new FaultService(copyEnv, join(dir, 'logs-restored'));
      copy.spawn();
      await copy.ready();
      await settle(copy.base);
      // The same tokens work: the embedded backup carries its signing secret.
      expect(await answers(copy.base, quietToken)).toEqual(recallBefore);
      for (const story of before.stories.filter((s) => s.acked)) {
        const res = await fetch(`${copy.base}/stories/${story.id}/file`, {
          headers: { authorization: `Bearer ${quietToken}` },
        });
        expect(res.status).toBe(200);
        expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(story.sha256);
      }
      await copy.stop();
      await original.stop();
      const problems = await withDatabase(
        restoredUrl ? { DATABASE_URL: restoredUrl } : { DATA_DIR: copyEnv.DATA_DIR },
        async (query) => [
          ...(await acknowledgedWritesHold(query, before)),
          ...(await acknowledgedWritesHold(query, acknowledgedBefore)),
        ],
      );
      expect(problems).toEqual([]);
      report(
        `backup, ${where}: taken under load in ${Math.round(backupMs)} ms, restored in ${Math.round(restoreMs)} ms; ` +
          `${before.acknowledged + acknowledgedBefore.acknowledged} writes acknowledged before it all restored, ` +
          `stories byte for byte, recall the same on ${QUESTIONS.length} questions`,
      );
    }));
});

/** What the ledger held acknowledged at this moment (later answers are not promised). */
function snapshotLedger(ledger: Ledger): Ledger {
  const copy = new Ledger();
  for (const [id, turn] of ledger.turns) if (turn.acked) copy.turns.set(id, { ...turn });
  copy.imports.push(...ledger.imports.filter((i) => i.acked).map((i) => ({ ...i })));
  copy.stories.push(...ledger.stories.filter((s) => s.acked).map((s) => ({ ...s })));
  copy.facts.push(
    ...ledger.facts
      .filter((f) => f.acked)
      .map((f) => ({ ...f, shared: f.shared === 'yes' ? ('yes' as const) : ('unknown' as const) })),
  );
  copy.memories.push(
    ...ledger.memories
      .filter((m) => m.acked)
      .map((m) => ({
        ...m,
        forgotten: m.forgotten === 'yes' ? ('yes' as const) : ('unknown' as const),
      })),
  );
  return copy;
}
