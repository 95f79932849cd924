import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportArchive } from '../support/archives.js';
import { openToOthers, openUp } from '../support/file-modes.js';
import { signToken, startTestApp, TestApp, TestUser } from '../support/test-app.js';
import { createTestDatabase } from '../support/test-database.js';

/** A private fact's words, found nowhere else: what an attacker greps the disk for. */
const SECRET = 'quincemarmalade-under-the-floorboard-7731';

/**
 * Another local account, as the kernel sees one: a uid and gid of their own that no account
 * uses, with no supplementary groups. Nothing is added to /etc/passwd (nothing to clean up, and
 * nothing left if the run is killed); the kernel's permission checks are the same for a named
 * account. Switching to it needs root (CAP_SETUID), as CI runs; elsewhere the reason is given.
 */
function otherUser(): { uid: number } | string {
  if (process.platform !== 'linux') return `needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'running a command as another user needs root';
  const used = new Set(
    readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map((line) => Number(line.split(':')[2])),
  );
  let uid = 64_200;
  while (used.has(uid)) uid++;
  const probe = spawnSync('setpriv', [...asUser(uid), 'true'], { encoding: 'utf8' });
  if (probe.error) return `setpriv is not there (${probe.error.message})`;
  if (probe.status !== 0) return `setpriv refused: ${probe.stderr.trim()}`;
  return { uid };
}

const asUser = (uid: number) => [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--'];

const other = otherUser();
if (typeof other === 'string') {
  process.stderr.write(
    `\n[data-dir-privacy] SKIPPED: reading DATA_DIR as another local user needs one: ${other}\n`,
  );
}

/**
 * The embedded installation on a computer with other accounts: DATA_DIR as an earlier version
 * left it (folders 0755, PGlite's files 0666) and a process umask of 0022. After a boot and a
 * family's use, another unprivileged account tries what an attacker would: grep every file
 * under DATA_DIR for a member's private fact, read and write the WAL, the relation files, the
 * archives and the generated secret. It can do all of that to a file beside DATA_DIR (so the
 * attempt is real), and none of it inside.
 */
(typeof other === 'string' ? describe.skip : describe)(
  'DATA_DIR against another local account',
  () => {
    const uid = (other as { uid: number }).uid;
    let parent: string;
    let dataDir: string;
    let t: TestApp;
    let umask: number;
    let ana: TestUser;

    /** Runs a shell script as the other account; its output and exit status. */
    const attacker = (script: string, ...args: string[]) =>
      spawnSync('setpriv', [...asUser(uid), 'sh', '-c', script, 'sh', ...args], {
        encoding: 'utf8',
      });

    beforeAll(async () => {
      parent = mkdtempSync(join(tmpdir(), 'keepsake-neighbour-'));
      chmodSync(parent, 0o755);
      const template = await createTestDatabase({ embedded: true });
      dataDir = join(parent, 'data');
      cpSync(template.dataDir, dataDir, { recursive: true });
      await template.remove();
      openUp(dataDir);
      umask = process.umask(0o022);
      // No JWT_SECRET: the service generates one into DATA_DIR, as a family's installation does.
      t = await startTestApp({
        DATA_DIR: dataDir,
        JWT_SECRET: '',
        JOBS_WORKER: 'false',
        JOBS_SCHEDULER: 'false',
        AGENT_REPLY: 'off',
      });
      const secret = readFileSync(join(dataDir, 'jwt-secret'), 'utf8').trim();
      ana = {
        sub: 'neighbour-ana',
        token: await signToken(
          'neighbour-ana',
          { email: 'ana@example.com', email_verified: true },
          { secret },
        ),
      };
    }, 180_000);

    afterAll(async () => {
      await t?.close();
      process.umask(umask);
      rmSync(parent, { recursive: true, force: true });
    });

    it("keeps a member's private fact, the WAL, relations, archives and the secret from another account", async () => {
      const legacy = await t.gql<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Opa" }) { id } }',
        {},
        ana,
      );
      expect(legacy.errors).toBeUndefined();
      const legacyId = legacy.data!.createLegacy.id;
      const fact = await t.gql(
        `mutation($l: ID!, $c: String!) {
           addFact(input: { legacyId: $l, content: $c, category: HABIT, visibility: PRIVATE }) { id } }`,
        { l: legacyId, c: `He kept the ${SECRET} recipe to himself.` },
        ana,
      );
      expect(fact.errors).toBeUndefined();
      await exportArchive(t, ana, legacyId);

      // As root: the words are on disk (the WAL holds them as written), and every file is private.
      const holding = execFileSync('grep', ['-rla', SECRET, dataDir], { encoding: 'utf8' })
        .trim()
        .split('\n');
      expect(holding.some((f) => f.includes(`${join(dataDir, 'pg', 'pg_wal')}/`))).toBe(true);
      expect(openToOthers(dataDir)).toEqual([]);
      expect(lstatSync(dataDir).mode & 0o777).toBe(0o700);

      // What an attacker tries: each file the family keeps, and one left beside DATA_DIR.
      const wal = readdirSync(join(dataDir, 'pg', 'pg_wal'))
        .filter((f) => /^[0-9A-F]{24}$/.test(f))
        .map((f) => join(dataDir, 'pg', 'pg_wal', f));
      const relations = readdirSync(join(dataDir, 'pg', 'base', '5'))
        .slice(0, 20)
        .map((f) => join(dataDir, 'pg', 'base', '5', f));
      const archives = readdirSync(join(dataDir, 'archives'))
        .filter((f) => f.endsWith('.zip'))
        .map((f) => join(dataDir, 'archives', f));
      expect(archives.length).toBe(1);
      const targets = [
        ...wal,
        ...relations,
        ...archives,
        join(dataDir, 'jwt-secret'),
        join(dataDir, 'pg', 'PG_VERSION'),
      ];
      for (const target of targets) expect(existsSync(target)).toBe(true);
      const beside = join(parent, 'left-beside.txt');
      writeFileSync(beside, `a note about ${SECRET}\n`);
      chmodSync(beside, 0o666);

      // The attacker's own method: grep -rla over everything it can reach.
      const grep = attacker('grep -rla "$1" "$2"; true', SECRET, parent);
      expect(grep.stdout.trim().split('\n')).toEqual([beside]);
      // And file by file: nothing to read, nothing to write, not even a name to list.
      const probe = attacker(
        'for f in "$@"; do test -r "$f" && echo "readable $f"; test -w "$f" && echo "writable $f"; ' +
          'cat "$f" >/dev/null 2>&1 && echo "read $f"; done; true',
        beside,
        ...targets,
      );
      expect(probe.stdout.trim().split('\n')).toEqual([
        `readable ${beside}`,
        `writable ${beside}`,
        `read ${beside}`,
      ]);
      const listing = attacker('ls "$1" >/dev/null 2>&1 && echo listed; true', dataDir);
      expect(listing.stdout.trim()).toBe('');
    });
  },
);
