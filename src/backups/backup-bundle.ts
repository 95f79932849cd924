import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';

/** What a backup holds and how to check it, written first into the bundle as manifest.json. */
export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  createdAt: string;
  /** embedded: the data directory (pg/) and the token secret; server: a pg_dump archive. */
  database: 'embedded' | 'server';
  /** PostgreSQL's server_version where it was taken. */
  postgres: string;
  /** The newest migration applied when it was taken. */
  lastMigration: string | null;
  keepsake: string;
  /** Rows of what a family keeps, read in the same snapshot: a restore is checked against them. */
  counts: Record<string, number>;
  files: { path: string; bytes: number; sha256: string }[];
  /** Folders, empty ones included (PostgreSQL needs its own to exist). */
  directories: string[];
}

export const BACKUP_FORMAT = 'keepsake-backup';
export const BACKUP_VERSION = 1;
export const MANIFEST = 'manifest.json';

/** The tables whose rows a backup counts, and a restore checks, by what a family keeps. */
export const COUNTED_TABLES = [
  'legacies',
  'users',
  'conversations',
  'messages',
  'facts',
  'memories',
  'stories',
  'story_files',
  'period_summaries',
] as const;

/** `SELECT` of the counted tables' row counts, one column each. */
export const COUNTS_SQL = `SELECT ${COUNTED_TABLES.map((t) => `(SELECT count(*) FROM ${t})::int AS ${t}`).join(', ')}`;

/** Copies a file and answers its size and SHA-256, read once. */
export async function copyHashed(
  from: string,
  to: string,
): Promise<{ bytes: number; sha256: string }> {
  await mkdir(dirname(to), { recursive: true });
  const hash = createHash('sha256');
  let bytes = 0;
  await pipeline(
    createReadStream(from),
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        bytes += chunk.length;
        done(null, chunk);
      },
    }),
    createWriteStream(to, { mode: 0o600 }),
  );
  return { bytes, sha256: hash.digest('hex') };
}

export async function hashFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** Every file (or folder) under `root`, as paths relative to it with forward slashes. */
export async function listFiles(
  root: string,
  kind: 'file' | 'directory' = 'file',
): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (kind === 'file' ? entry.isFile() : entry.isDirectory()) {
      out.push(relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'));
    }
  }
  return out.sort();
}

/**
 * Writes a bundle: manifest.json, then every file the manifest names from `root`, as one
 * gzipped tar that any tar reads. Streamed: memory stays small however large the backup.
 */
export async function writeBundle(
  root: string,
  manifest: BackupManifest,
  out: Writable,
): Promise<void> {
  await writeFile(join(root, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  const pack = tar.create({ gzip: { level: 6 }, cwd: root, portable: true, noDirRecurse: true }, [
    MANIFEST,
    ...manifest.directories,
    ...manifest.files.map((f) => f.path),
  ]);
  await pipeline(pack as unknown as NodeJS.ReadableStream, out);
}

export class BundleError extends Error {}

/**
 * Unpacks a bundle into `into` (which must be empty) and checks it: a manifest of this format,
 * every file it names present with its size and SHA-256, nothing else. Answers the manifest.
 */
export async function extractBundle(file: string, into: string): Promise<BackupManifest> {
  await mkdir(into, { recursive: true });
  try {
    await tar.extract({ file, cwd: into, strict: true });
  } catch (err) {
    throw new BundleError(`${file} is not a readable Keepsake backup (${(err as Error).message}).`);
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(join(into, MANIFEST), 'utf8')) as BackupManifest;
  } catch {
    throw new BundleError(`${file} holds no manifest.json: it is not a Keepsake backup.`);
  }
  if (manifest.format !== BACKUP_FORMAT || manifest.version !== BACKUP_VERSION) {
    throw new BundleError(
      `${file} is a ${manifest.format ?? 'unknown'} ${manifest.version ?? ''} bundle; this Keepsake reads ${BACKUP_FORMAT} ${BACKUP_VERSION}.`,
    );
  }
  const named = new Set(manifest.files.map((f) => f.path));
  for (const path of await listFiles(into)) {
    if (path !== MANIFEST && !named.has(path)) {
      throw new BundleError(`${file} holds ${path}, which its manifest does not name.`);
    }
  }
  const folders = new Set(await listFiles(into, 'directory'));
  for (const dir of manifest.directories ?? []) {
    if (!folders.has(dir)) throw new BundleError(`${file} lacks the folder ${dir}.`);
  }
  for (const expected of manifest.files) {
    const path = join(into, expected.path);
    const found = await stat(path).then(
      () => hashFile(path),
      () => null,
    );
    if (!found) throw new BundleError(`${file} lacks ${expected.path}, which its manifest names.`);
    if (found.bytes !== expected.bytes || found.sha256 !== expected.sha256) {
      throw new BundleError(`${expected.path} in ${file} is damaged (its SHA-256 differs).`);
    }
  }
  return manifest;
}

/**
 * Reads a whole bundle without unpacking it and checks every file against the manifest (which
 * comes first): a backup cut off or damaged on its way to the disk is told apart from a good one.
 */
export async function verifyBundle(file: string): Promise<BackupManifest> {
  let manifest: BackupManifest | null = null;
  const seen = new Map<string, { bytes: number; sha256: string }>();
  const pending: Promise<void>[] = [];
  try {
    await tar.list({
      file,
      strict: true,
      onReadEntry: (entry) => {
        const hash = createHash('sha256');
        const chunks: Buffer[] = [];
        let bytes = 0;
        const isManifest = entry.path === MANIFEST;
        pending.push(
          new Promise<void>((done) => {
            entry.on('data', (chunk: Buffer) => {
              hash.update(chunk);
              bytes += chunk.length;
              if (isManifest) chunks.push(chunk);
            });
            entry.on('end', () => {
              if (isManifest) {
                manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BackupManifest;
              } else seen.set(entry.path, { bytes, sha256: hash.digest('hex') });
              done();
            });
          }),
        );
      },
    });
    await Promise.all(pending);
  } catch (err) {
    throw new BundleError(`${file} is not a whole Keepsake backup (${(err as Error).message}).`);
  }
  const found = manifest as BackupManifest | null;
  if (!found || found.format !== BACKUP_FORMAT) {
    throw new BundleError(`${file} holds no Keepsake manifest.`);
  }
  for (const expected of found.files) {
    const got = seen.get(expected.path);
    if (!got || got.bytes !== expected.bytes || got.sha256 !== expected.sha256) {
      throw new BundleError(`${expected.path} in ${file} is missing or damaged.`);
    }
  }
  return found;
}
