import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { ArchivesService } from '../../src/archives/archives.service.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { ON_SERVER } from '../support/test-database.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  ARCHIVE_FIELDS,
  ArchiveView,
  exportArchive,
  importArchive,
  uploadArchive,
} from '../support/archives.js';

/**
 * Where archives wait: in the database (ARCHIVE_STORE=database, any instance serves any of them)
 * or in a directory; what is left of them once imported or expired (nothing); and, on a server,
 * two instances on one database: an export written by one is downloaded from the other, and an
 * archive uploaded to one is imported by the other's job worker.
 */
async function fill(t: TestApp, as: TestUser, name: string): Promise<string> {
  const created = await t.gql<{ createLegacy: { id: string } }>(
    'mutation($n: String!) { createLegacy(input: { name: $n }) { id } }',
    { n: name },
    as,
  );
  const legacyId = created.data!.createLegacy.id;
  const story = await t.gql(
    'mutation($l: ID!) { addStory(input: { legacyId: $l, title: "The boat", content: "He painted the boat blue every spring." }) { id } }',
    { l: legacyId },
    as,
  );
  expect(story.errors).toBeUndefined();
  return legacyId;
}

const chunks = async (t: TestApp, id: string) =>
  (
    await t.app
      .get(DataSource)
      .query('SELECT count(*)::int AS n FROM legacy_archive_chunks WHERE archive_id = $1', [id])
  )[0].n as number;

describe.each(['database', 'directory'] as const)('archives kept in the %s', (store) => {
  let t: TestApp;
  let user: TestUser;
  let legacyId: string;

  beforeAll(async () => {
    t = await startTestApp({
      AGENT_REPLY: 'off',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      ARCHIVE_STORE: store,
    });
    user = await t.user(`archives-store-${store}`, {
      email: `${store}@archives-store.example.com`,
    });
    legacyId = await fill(t, user, 'Uncle Tom');
  }, 300_000);
  afterAll(() => t?.close());

  const dir = () => join(t.dataDir, 'archives');
  const zips = () =>
    existsSync(dir()) ? readdirSync(dir()).filter((f) => f.endsWith('.zip')) : [];

  it('keeps an export there until it expires, then nothing of it', async () => {
    const { archive, zip } = await exportArchive(t, user, legacyId);
    expect(zip.byteLength).toBe(archive.sizeBytes);
    if (store === 'database') {
      expect(await chunks(t, archive.id)).toBeGreaterThan(0);
      expect(zips()).toEqual([]);
    } else {
      expect(await chunks(t, archive.id)).toBe(0);
      expect(zips()).toEqual([`${archive.id}.zip`]);
    }
    // Nothing left in the scratch directory.
    expect(readdirSync(join(dir(), 'tmp'))).toEqual([]);
    const expired = await t.app.get(ArchivesService).expire(new Date(Date.now() + 4 * 86_400_000));
    expect(expired).toBe(1);
    expect(await chunks(t, archive.id)).toBe(0);
    expect(zips()).toEqual([]);
    const res = await fetch(new URL(`/archives/${archive.id}/file`, t.url), {
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(res.status).toBe(409);
    const body = (await res.json()) as {
      errors: { message: string; extensions: Record<string, string> }[];
    };
    expect(body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'NOT_READY' });
    expect(body.errors[0].message).toContain('ARCHIVE_KEEP');
    const view = await t.gql<{ legacyArchive: { status: string } }>(
      'query($id: ID!) { legacyArchive(id: $id) { status } }',
      { id: archive.id },
      user,
    );
    expect(view.data!.legacyArchive.status).toBe('EXPIRED');
  });

  it('keeps an upload there until its import completes, then nothing of it', async () => {
    const { zip } = await exportArchive(t, user, legacyId);
    const before = zips().length;
    const imported = await importArchive(t, user, zip);
    expect(imported.status).toBe('COMPLETED');
    expect(await chunks(t, imported.id)).toBe(0);
    expect(zips()).toHaveLength(before);
    expect(readdirSync(join(dir(), 'tmp'))).toEqual([]);
  });
});

const describeServer = ON_SERVER ? describe : describe.skip;

describeServer('archives across two instances on one server', () => {
  let a: TestApp;
  let b: TestApp;
  let user: TestUser;
  let legacyId: string;

  beforeAll(async () => {
    // A serves requests only; B runs the jobs, on a data directory of its own (no shared disk).
    a = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    b = await startTestApp(
      {
        ...a.databaseEnv,
        DATA_DIR: `${a.dataDir}-b`,
        AGENT_REPLY: 'off',
        JOBS_WORKER: 'false',
        JOBS_SCHEDULER: 'false',
      },
      { keepData: true },
    );
    user = await a.user('archives-two-instances', { email: 'two@archives-store.example.com' });
    legacyId = await fill(a, user, 'Aunt Bea');
  }, 300_000);
  afterAll(async () => {
    // B leaves the database to A, which drops it; B's own directory goes here.
    await b?.close();
    if (b) rmSync(b.dataDir, { recursive: true, force: true });
    await a?.close();
  });

  it('downloads from one what the other wrote, and imports on one what the other received', async () => {
    const asked = await a.gql<{ exportLegacyArchive: ArchiveView }>(
      `mutation($l: ID!) { exportLegacyArchive(legacyId: $l) { ${ARCHIVE_FIELDS} } }`,
      { l: legacyId },
      user,
    );
    await b.app.get(JobsService).drain();
    const ready = await a.gql<{ legacyArchive: ArchiveView }>(
      `query($id: ID!) { legacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
      { id: asked.data!.exportLegacyArchive.id },
      user,
    );
    expect(ready.data!.legacyArchive.status).toBe('COMPLETED');
    const file = await fetch(new URL(ready.data!.legacyArchive.downloadUrl!, a.url), {
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(file.status).toBe(200);
    const zip = Buffer.from(await file.arrayBuffer());
    expect(zip.byteLength).toBe(ready.data!.legacyArchive.sizeBytes);

    const uploaded = await uploadArchive(a, user, zip);
    expect(uploaded.status).toBe(201);
    const started = await a.gql(
      'mutation($id: ID!) { importLegacyArchive(id: $id) { id } }',
      { id: uploaded.body.id },
      user,
    );
    expect(started.errors).toBeUndefined();
    await b.app.get(JobsService).drain();
    const done = await a.gql<{ legacyArchive: ArchiveView }>(
      `query($id: ID!) { legacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
      { id: uploaded.body.id },
      user,
    );
    expect(done.data!.legacyArchive).toMatchObject({ status: 'COMPLETED', counts: { stories: 1 } });
    const stories = await a.gql<{ stories: { nodes: { title: string }[] } }>(
      'query($l: ID!) { stories(legacyId: $l) { nodes { title } } }',
      { l: done.data!.legacyArchive.legacyId },
      user,
    );
    expect(stories.data!.stories.nodes.map((s) => s.title)).toEqual(['The boat']);
  });
});
