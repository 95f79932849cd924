import {
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { DataDirPermissionError, securePrivateDir } from '../../src/common/files/private-files.js';
import { PrivateNodeFS } from '../../src/database/private-node-fs.mjs';
import { openToOthers, openUp } from '../support/file-modes.js';
import { createTestDatabase, TestDatabase } from '../support/test-database.js';

describe('files a family keeps are the service user’s alone', () => {
  let scratch: string;

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'keepsake-private-'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  describe("PGlite's files, whatever the process umask", () => {
    let db: TestDatabase;
    let umask: number;

    beforeAll(async () => {
      db = await createTestDatabase({ embedded: true });
      // The loosest umask there is: nothing but PrivateNodeFS stands between the files and others.
      umask = process.umask(0);
    });
    afterAll(async () => {
      process.umask(umask);
      await db.remove();
    });

    it('creates every file 0600 in 0700 folders: a new cluster (initdb), new relations, new WAL segments', async () => {
      const pgDir = join(db.dataDir, 'pg');
      const pg = await PGlite.create({ fs: new PrivateNodeFS(pgDir) });
      try {
        // A table and an index of their own (new relation files), past a WAL segment, checkpointed.
        await pg.exec(`CREATE TABLE private_words (t text);
          INSERT INTO private_words SELECT repeat('grandmother''s recipe ', 50) FROM generate_series(1, 2000);
          CREATE INDEX ON private_words (t);
          CHECKPOINT;
          SELECT pg_switch_wal();
          INSERT INTO private_words VALUES ('after the switch');`);
      } finally {
        await pg.close();
      }
      const segments = readdirSync(join(pgDir, 'pg_wal')).filter((f) => /^[0-9A-F]{24}$/.test(f));
      expect(segments.length).toBeGreaterThan(1);
      // The copy of the run's template, made by openEmbeddedPostgres as a new installation is
      // (Emscripten chmods initdb's files 0666 whatever the umask), and all PGlite wrote since.
      expect(openToOthers(pgDir)).toEqual([]);
    });
  });

  describe('securePrivateDir at boot', () => {
    it('closes a data directory that other users can read or write, and everything in it', () => {
      const dir = join(scratch, 'open');
      mkdirSync(join(dir, 'pg', 'base'), { recursive: true });
      mkdirSync(join(dir, 'archives'));
      writeFileSync(join(dir, 'pg', 'base', '1259'), 'relation');
      writeFileSync(join(dir, 'archives', 'a.zip'), 'zip');
      writeFileSync(join(dir, 'jwt-secret'), 'secret');
      openUp(dir);
      expect(openToOthers(dir).length).toBe(7);

      const report = securePrivateDir(dir);
      expect(report).toEqual({ dir, wasOpen: '0755', tightened: 6 });
      expect(openToOthers(dir)).toEqual([]);
      expect(lstatSync(dir).mode & 0o777).toBe(0o700);
      expect(lstatSync(join(dir, 'jwt-secret')).mode & 0o777).toBe(0o600);
      // Nothing to do the second time.
      expect(securePrivateDir(dir)).toEqual({ dir, wasOpen: null, tightened: 0 });
    });

    it('creates a missing data directory 0700', () => {
      const dir = join(scratch, 'new', 'data');
      securePrivateDir(dir);
      expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    });

    const asRoot = process.getuid?.() === 0;
    if (!asRoot) {
      process.stderr.write(
        '\n[private-files] the refusal of a data directory another user owns is not tested: it needs root to give a directory away\n',
      );
    }
    (asRoot ? it : it.skip)(
      'refuses a data directory another user owns, saying how to fix it',
      () => {
        const dir = join(scratch, 'theirs');
        mkdirSync(dir, { mode: 0o700 });
        chownSync(dir, 64_123, 64_123);
        expect(() => securePrivateDir(dir)).toThrow(DataDirPermissionError);
        expect(() => securePrivateDir(dir)).toThrow(
          new RegExp(`belongs to uid 64123, not to uid 0 .*chown -R 0 ${dir}`),
        );
      },
    );
  });
});
