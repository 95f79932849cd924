import { PassThrough } from 'node:stream';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { TestApp, TestUser } from './test-app.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { type ArchivePart, PART_PATHS } from '../../src/archives/archive-format.js';

/** Every file of a ZIP, by name (small archives only: tests). */
export async function unzipAll(zip: Buffer): Promise<Map<string, Buffer>> {
  const file = await yauzl.fromBufferPromise(zip, { lazyEntries: true });
  const out = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    file.on('entry', (entry: yauzl.Entry) => {
      file.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('error', reject);
        stream.on('end', () => {
          out.set(entry.fileName, Buffer.concat(chunks));
          file.readEntry();
        });
      });
    });
    file.on('end', () => resolve());
    file.on('error', reject);
    file.readEntry();
  });
  return out;
}

/** The lines of a JSON Lines part of an archive, parsed. */
export function jsonLines<T = Record<string, unknown>>(
  files: Map<string, Buffer>,
  path: string,
): T[] {
  const text = files.get(path)?.toString('utf8') ?? '';
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

export const ARCHIVE_FIELDS = `id kind status legacyId stage done total progress fileName sizeBytes downloadUrl
  failureCode failureReason counts { facts stories conversations turns memories periodSummaries }`;

export interface ArchiveView {
  id: string;
  kind: string;
  status: string;
  legacyId: string | null;
  stage: string | null;
  done: number;
  total: number;
  progress: number;
  fileName: string | null;
  sizeBytes: number | null;
  downloadUrl: string | null;
  failureCode: string | null;
  failureReason: string | null;
  counts: Record<string, number>;
}

/** Asks for an export, runs the jobs, and downloads the ZIP. */
export async function exportArchive(
  t: TestApp,
  as: TestUser,
  legacyId: string,
): Promise<{ archive: ArchiveView; zip: Buffer }> {
  const res = await t.gql<{ exportLegacyArchive: ArchiveView }>(
    `mutation($l: ID!) { exportLegacyArchive(legacyId: $l) { ${ARCHIVE_FIELDS} } }`,
    { l: legacyId },
    as,
  );
  if (res.errors) throw new Error(`exportLegacyArchive: ${JSON.stringify(res.errors)}`);
  await t.app.get(JobsService).drain();
  const done = await t.gql<{ legacyArchive: ArchiveView }>(
    `query($id: ID!) { legacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
    { id: res.data!.exportLegacyArchive.id },
    as,
  );
  const archive = done.data!.legacyArchive;
  if (archive.status !== 'COMPLETED') throw new Error(`export ${JSON.stringify(archive)}`);
  const file = await fetch(new URL(archive.downloadUrl!, t.url), {
    headers: { authorization: `Bearer ${as.token}` },
  });
  if (file.status !== 200) throw new Error(`download: ${file.status} ${await file.text()}`);
  return { archive, zip: Buffer.from(await file.arrayBuffer()) };
}

/** Uploads a ZIP for import; the route's answer. */
export async function uploadArchive(
  t: TestApp,
  as: TestUser | null,
  zip: Uint8Array,
  name = 'archive.zip',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new FormData();
  form.append('file', new Blob([zip]), name);
  const res = await fetch(new URL('/archives', t.url), {
    method: 'POST',
    headers: as ? { authorization: `Bearer ${as.token}` } : {},
    body: form,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Uploads and imports a ZIP, runs the jobs; the finished import. */
export async function importArchive(
  t: TestApp,
  as: TestUser,
  zip: Uint8Array,
): Promise<ArchiveView> {
  const uploaded = await uploadArchive(t, as, zip);
  if (uploaded.status !== 201) throw new Error(`upload: ${JSON.stringify(uploaded.body)}`);
  const res = await t.gql<{ importLegacyArchive: ArchiveView }>(
    `mutation($id: ID!) { importLegacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
    { id: uploaded.body.id },
    as,
  );
  if (res.errors) throw new Error(`importLegacyArchive: ${JSON.stringify(res.errors)}`);
  await t.app.get(JobsService).drain({ timeoutMs: 300_000 });
  const done = await t.gql<{ legacyArchive: ArchiveView }>(
    `query($id: ID!) { legacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
    { id: uploaded.body.id },
    as,
  );
  return done.data!.legacyArchive;
}

/** A ZIP of the given files, in memory (yazl, as the export writes). */
export async function zipOf(
  files: Record<string, string | Buffer>,
  options: { compress?: boolean } = {},
): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) {
    zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name, {
      compress: options.compress ?? true,
    });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream.pipe(new PassThrough())) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** keepsake.json as a test edits it. */
export interface ManifestJson {
  legacy: Record<string, unknown>;
  parts: Record<string, { path: string; count: number }>;
  [field: string]: unknown;
}

/**
 * An archive made from the files of a valid one, as a hand-made or hostile archive would be:
 * `parts` replaces a part's lines (objects are written as JSON, strings as they are) and its
 * count in keepsake.json follows unless `manifest` says otherwise; `files` adds, replaces or
 * (null) removes files.
 */
export function archiveVariant(
  valid: Map<string, Buffer>,
  changes: {
    parts?: Partial<Record<ArchivePart, (string | Record<string, unknown>)[]>>;
    files?: Record<string, string | Buffer | null>;
    manifest?: (manifest: ManifestJson) => void;
  },
): Promise<Buffer> {
  const files: Record<string, string | Buffer> = {};
  for (const [name, bytes] of valid) files[name] = bytes;
  const manifest = JSON.parse(files['keepsake.json'].toString()) as ManifestJson;
  for (const [part, lines] of Object.entries(changes.parts ?? {})) {
    const path = PART_PATHS[part as ArchivePart];
    files[path] = lines.map((l) => `${typeof l === 'string' ? l : JSON.stringify(l)}\n`).join('');
    manifest.parts[part].count = lines.length;
  }
  changes.manifest?.(manifest);
  files['keepsake.json'] = JSON.stringify(manifest);
  for (const [name, bytes] of Object.entries(changes.files ?? {})) {
    if (bytes === null) delete files[name];
    else files[name] = bytes;
  }
  return zipOf(files);
}

/** Waits for `check` to give something other than undefined, polling (no fixed sleep). */
export async function until<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An archive as its owner reads it. */
export async function archiveOf(t: TestApp, as: TestUser, id: string): Promise<ArchiveView> {
  const res = await t.gql<{ legacyArchive: ArchiveView }>(
    `query($id: ID!) { legacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
    { id },
    as,
  );
  if (res.errors) throw new Error(`legacyArchive: ${JSON.stringify(res.errors)}`);
  return res.data!.legacyArchive;
}
