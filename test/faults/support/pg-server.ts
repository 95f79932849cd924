import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { ROOT } from '../../support/service-process.js';

/**
 * A PostgreSQL server of a fault test's own (test/support/postgres.sh, the packaged server the
 * suite's server pass uses), so that it can be stopped, crashed or starved without touching the
 * server every other test shares.
 */
export class PgServer {
  constructor(
    readonly port: number,
    readonly dir: string,
    /** Where its WAL lives, when on a volume of its own (initdb --waldir). */
    private readonly walDir?: string,
  ) {
    // The server's own user (keepsake-pg, as root) must reach the folder that holds it, and
    // the worker's umask may be 0077: a service started in it keeps its new files private.
    for (const folder of [dirname(dir), ...(walDir ? [dirname(walDir)] : [])]) {
      mkdirSync(folder, { recursive: true });
      reachable(folder);
    }
  }

  private script(...args: string[]): string {
    return execFileSync(
      'bash',
      ['test/support/postgres.sh', ...args, '--port', String(this.port), '--dir', this.dir],
      { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: withoutServerUrl() },
    ).trim();
  }

  /**
   * Starts it (creating the data directory the first time), or finds it running, as a
   * supervisor would (systemd's Restart=); answers the URL of `db`.
   */
  start(db = 'keepsake'): string {
    const wal = this.walDir ? ['--wal-dir', this.walDir] : [];
    return this.script('start', '--db', db, ...wal)
      .split('\n')
      .pop()!;
  }

  /** pg_ctl stop -m immediate: the server stops at once, as at a crash. */
  crash(): void {
    this.script('stop', '--mode', 'immediate');
  }

  stop(): void {
    this.script('stop');
  }

  /**
   * Makes it a streaming hot standby of `primary` (pg_basebackup the first time) under the
   * name `name` (what synchronous_standby_names lists), and starts it; answers the URL of `db`.
   */
  replicaOf(primary: PgServer, name: string, db = 'keepsake'): string {
    return this.script('replica', '--of', primary.dir, '--name', name, '--db', db)
      .split('\n')
      .pop()!;
  }

  /** pg_ctl promote: the standby becomes a primary. */
  promote(): void {
    this.script('promote');
  }

  /** The stopped or crashed former primary rewound (pg_rewind) and started as `primary`'s standby. */
  rejoin(primary: PgServer, name: string): void {
    this.script('rejoin', '--of', primary.dir, '--name', name);
  }
}

/** The script reuses TEST_DATABASE_URL when given; a server of a test's own must not. */
function withoutServerUrl(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.TEST_DATABASE_URL;
  return env;
}

/** Lets other users through every folder from this one up to the checkout (read and search). */
function reachable(folder: string): void {
  for (
    let f = folder;
    relative(ROOT, f) !== '' && !relative(ROOT, f).startsWith('..');
    f = dirname(f)
  ) {
    chmodSync(f, statSync(f).mode | 0o055);
  }
}
