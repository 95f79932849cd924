import { HEALTH_TOKEN, readyDetails } from '../support/health.js';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BundleError, extractBundle, verifyBundle } from '../../src/backups/backup-bundle.js';
import { BackupsService } from '../../src/backups/backups.service.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { ON_SERVER, TEST_DB_ROOT } from '../support/test-database.js';

/**
 * The embedded database's scheduled backups: made when due (and once only, however often the
 * task runs), kept BACKUP_KEEP deep, their age in /health/ready and /metrics, each file checked
 * against its manifest. A server is backed up with its own tools (test/faults/backup).
 *
 * @pass embedded: scheduled backups are the embedded database's.
 */
(ON_SERVER ? describe.skip : describe)('scheduled backups of the embedded database', () => {
  let t: TestApp;
  let backups: BackupsService;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      BACKUP_SCHEDULE: '30 3 * * *',
      BACKUP_KEEP: '2',
      METRICS_ENABLED: 'true',
      METRICS_DB_REFRESH_MS: '0',
      METRICS_TOKEN: HEALTH_TOKEN,
    });
    backups = t.app.get(BackupsService);
  });
  afterAll(() => t.close());

  const health = async () =>
    (
      await readyDetails<{
        backup: { schedule: string; lastGoodAt: string | null; ageSeconds: number | null };
      }>(t.url)
    ).body;
  const scrape = async () =>
    (
      await fetch(t.url.replace('/graphql', '/metrics'), {
        headers: { authorization: `Bearer ${HEALTH_TOKEN}` },
      })
    ).text();

  // Three backups of a data directory: over a minute beside a busy suite.
  it('makes one when due, none again until the schedule comes round, and keeps BACKUP_KEEP', async () => {
    expect((await health()).backup).toEqual({
      schedule: '30 3 * * *',
      lastGoodAt: null,
      ageSeconds: null,
    });
    // No backup yet: an alert on its age fires.
    expect(await scrape()).toMatch(/^keepsake_backup_age_seconds \+Inf$/m);
    const owner = await t.user('backup-owner');
    await t.gql('mutation { createLegacy(input: { name: "Joe" }) { id } }', {}, owner);

    // None yet: due at once (a computer off at 03:30 catches up within the hour).
    const first = await backups.backupIfDue(new Date('2026-11-20T10:00:00Z'));
    expect(first).toMatch(/keepsake-backup-2026-11-20T10-00-00Z\.tar\.gz$/);
    // Run again (the task twice, or the catch-up after the schedule): nothing new.
    expect(await backups.backupIfDue(new Date('2026-11-20T11:41:00Z'))).toBeNull();
    expect(await backups.backupIfDue(new Date('2026-11-21T03:29:00Z'))).toBeNull();
    // 03:30 came round.
    expect(await backups.backupIfDue(new Date('2026-11-21T03:30:00Z'))).toMatch(
      /2026-11-21T03-30-00Z/,
    );
    expect(await backups.backupIfDue(new Date('2026-11-22T09:00:00Z'))).toMatch(
      /2026-11-22T09-00-00Z/,
    );
    expect(readdirSync(backups.directory).sort()).toEqual([
      'keepsake-backup-2026-11-21T03-30-00Z.tar.gz',
      'keepsake-backup-2026-11-22T09-00-00Z.tar.gz',
    ]);

    const manifest = await verifyBundle(
      join(backups.directory, 'keepsake-backup-2026-11-22T09-00-00Z.tar.gz'),
    );
    expect(manifest).toMatchObject({
      format: 'keepsake-backup',
      database: 'embedded',
      counts: { legacies: 1, users: 1 },
    });
    // The secret comes from JWT_SECRET here: only a generated one lives in DATA_DIR, and goes
    // with it (test/faults/backup restores one and signs in with the same token).
    expect(manifest.files.map((f) => f.path)).toContain('pg/PG_VERSION');

    const h = await health();
    expect(h.backup.lastGoodAt).toBe('2026-11-22T09:00:00.000Z');
    expect(h.backup.ageSeconds).toBeGreaterThan(0);
    expect(await scrape()).toMatch(/^keepsake_backup_age_seconds \d+/m);
  }, 240_000);

  it('tells a damaged or cut-off backup from a good one', async () => {
    const good = join(backups.directory, 'keepsake-backup-2026-11-22T09-00-00Z.tar.gz');
    const bytes = readFileSync(good);
    const cut = join(TEST_DB_ROOT, `cut-${process.pid}.tar.gz`);
    writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await expect(verifyBundle(cut)).rejects.toThrow(BundleError);
    await expect(extractBundle(cut, join(TEST_DB_ROOT, `cut-${process.pid}`))).rejects.toThrow(
      BundleError,
    );
    const damaged = Buffer.from(bytes);
    damaged[Math.floor(damaged.length / 2)] ^= 0xff;
    writeFileSync(cut, damaged);
    await expect(verifyBundle(cut)).rejects.toThrow(BundleError);
  });
});
