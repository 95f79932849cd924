import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The compiled service as operators run it: `node dist/src/main.js` in a child process, with
 * configuration from the environment only.
 */

export const ROOT = resolve('.');
export const MAIN = join(ROOT, 'dist/src/main.js');
export const MINT = join(ROOT, 'dist/src/identity/cli/mint-token.js');

/** Newest modification time under the given files and directories (unit specs aside). */
function newest(paths: string[]): number {
  let latest = 0;
  const visit = (path: string) => {
    if (!existsSync(path) || path.endsWith('.spec.ts')) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else latest = Math.max(latest, stat.mtimeMs);
  };
  paths.forEach((p) => visit(join(ROOT, p)));
  return latest;
}

/** Builds dist/ once, unless it is already newer than every source file. */
export function ensureBuilt(): void {
  const sources = newest(['src', 'migrations', 'ormconfig.ts']);
  if (existsSync(MAIN) && newest(['dist/src', 'dist/migrations']) >= sources) return;
  try {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' });
  } catch (err) {
    // tsc still emits on type errors (the type-check is a job of its own): go on if it did.
    if (!existsSync(MAIN)) throw err;
    console.warn(`npm run build reported errors:\n${String((err as { stdout?: unknown }).stdout)}`);
  }
}

/** Only what we pass: no DATABASE_URL or JWT_SECRET leaks in from the test environment. */
export function baseEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? ROOT,
    // As in test-app.ts: the suite asserts with the encoder that needs no fetch.
    EMBEDDINGS_LOCAL_MODEL: 'use-lite',
    // Backups have tests of their own (as in test-app.ts).
    BACKUP_SCHEDULE: 'off',
    ...env,
  };
}

export interface LogLine {
  level: string;
  msg?: string;
  requestId?: string;
  [field: string]: unknown;
}

export interface Service {
  proc: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** JSON lines written on stdout so far; throws on a line that is not JSON. */
  logs(): LogLine[];
  /** Resolves with the GraphQL URL once listening; rejects if the process exits first. */
  listening: Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export const children = new Set<ChildProcess>();

export function run(script: string, env: Record<string, string>, args: string[] = []): Service {
  const proc = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: baseEnv(env) });
  children.add(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8');
  proc.stderr.setEncoding('utf8');
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    proc.on('exit', (code, signal) => {
      children.delete(proc);
      done({ code, signal });
    }),
  );
  /** Complete lines only: a chunk may end mid-line. */
  const logs = () =>
    stdout
      .slice(0, stdout.lastIndexOf('\n') + 1)
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as LogLine);
  const listening = new Promise<string>((resolveUrl, reject) => {
    proc.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      if (!stdout.includes('"Keepsake is listening"')) return;
      try {
        const ready = logs().find((l) => l.msg === 'Keepsake is listening');
        if (ready) resolveUrl(String(ready.url).replace('//localhost:', '//127.0.0.1:'));
      } catch (err) {
        reject(err as Error);
      }
    });
    proc.stderr.on('data', (chunk: string) => (stderr += chunk));
    void exited.then(({ code, signal }) =>
      reject(new Error(`exited (${code ?? signal}) before listening:\n${stderr}`)),
    );
  });
  listening.catch(() => undefined);
  return {
    proc,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    logs,
    listening,
    exited,
  };
}

export async function gql<T>(
  url: string,
  token: string,
  query: string,
  variables: Record<string, unknown> = {},
  requestId?: string,
  operationName?: string,
): Promise<{ data?: T; errors?: { extensions?: { code?: string } }[]; requestId: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      ...(requestId ? { 'x-request-id': requestId } : {}),
    },
    body: JSON.stringify({ query, variables, operationName }),
  });
  return { ...((await res.json()) as object), requestId: res.headers.get('x-request-id') };
}

export function mintToken(env: Record<string, string>, ...args: string[]): string {
  return execFileSync(process.execPath, [MINT, ...args], {
    cwd: ROOT,
    env: baseEnv(env),
    encoding: 'utf8',
  }).trim();
}

export async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}
