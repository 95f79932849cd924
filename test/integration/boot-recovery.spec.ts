import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAppConfig } from '../../src/app.config.js';
import { createFileOnce } from '../../src/common/files/atomic-file.js';
import {
  DataDirLockedError,
  lockDataDir,
  openEmbeddedPostgres,
  processStart,
} from '../../src/database/embedded-postgres.js';
import { resolveJwtSecret } from '../../src/identity/jwt-keys.js';
import { ON_SERVER, TEST_DB_ROOT } from '../support/test-database.js';

/**
 * Each state a process killed during boot can leave in DATA_DIR, and the next boot getting past
 * it. The fault suite (npm run test:faults) kills whole processes at random moments; these put
 * the states down exactly. The data directory is the embedded database's alone.
 *
 * @pass embedded: the data directory is the embedded database's alone.
 */
(ON_SERVER ? describe.skip : describe)('boot after a crash, on the embedded data directory', () => {
  const root = join(TEST_DB_ROOT, `boot-recovery-${process.pid}`);
  let n = 0;
  const fresh = () => {
    const dir = join(root, `d${++n}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("takes over a lock whose pid now belongs to another process, and keeps a live holder's", async () => {
    const dir = fresh();
    const other = spawn('sleep', ['30']);
    try {
      await new Promise((r) => other.once('spawn', r));
      // The pid of a holder that died, since given to an unrelated process that started later.
      writeFileSync(join(dir, 'keepsake.lock'), `${other.pid} 1`);
      const release = lockDataDir(dir);
      expect(readFileSync(join(dir, 'keepsake.lock'), 'utf8')).toBe(
        `${process.pid} ${processStart('self')}`,
      );
      release();
      // The same pid with its own start time is a live holder.
      writeFileSync(join(dir, 'keepsake.lock'), `${other.pid} ${processStart(other.pid!)}`);
      expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
      // A lock cut off before its pid was written is no one's.
      writeFileSync(join(dir, 'keepsake.lock'), '');
      lockDataDir(dir)();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('makes a new JWT secret in place of one cut off mid-write, and agrees on one when two start at once', () => {
    const dir = fresh();
    const config = loadAppConfig({ DATA_DIR: dir });
    writeFileSync(join(dir, 'jwt-secret'), 'abc');
    const secret = resolveJwtSecret(config)!;
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(join(dir, 'jwt-secret'), 'utf8')).toBe(secret);
    expect(readdirSync(dir).filter((f) => f.startsWith('jwt-secret.incomplete-'))).toHaveLength(1);
    expect(resolveJwtSecret(config)).toBe(secret);
    // Two processes creating one file: the second finds the first's, whole.
    expect(createFileOnce(join(dir, 'once'), 'first')).toBe(true);
    expect(createFileOnce(join(dir, 'once'), 'second')).toBe(false);
    expect(readFileSync(join(dir, 'once'), 'utf8')).toBe('first');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('opens a database whose first start was killed half way, keeping what it left aside', async () => {
    const dir = fresh();
    // What PGlite leaves when killed while it writes a new cluster: some files, no PG_VERSION.
    mkdirSync(join(dir, 'pg', 'base'), { recursive: true });
    writeFileSync(join(dir, 'pg', 'postgresql.conf'), '# cut off');
    mkdirSync(join(dir, 'pg.init', 'global'), { recursive: true });
    const db = await openEmbeddedPostgres(dir, 'main');
    await db.close();
    expect(existsSync(join(dir, 'pg', 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(dir, 'pg.init'))).toBe(false);
    const aside = readdirSync(dir).filter((f) => f.startsWith('pg.incomplete-'));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(dir, aside[0], 'postgresql.conf'), 'utf8')).toBe('# cut off');
    // And again: a whole directory is opened as it is.
    const again = await openEmbeddedPostgres(dir, 'main');
    await again.close();
    expect(readdirSync(dir).filter((f) => f.startsWith('pg.incomplete-'))).toHaveLength(1);
  }, 120_000);
});
