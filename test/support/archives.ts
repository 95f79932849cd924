import yauzl from 'yauzl';
import { TestApp, TestUser } from './test-app.js';
import { JobsService } from '../../src/jobs/jobs.service.js';

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
