import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  ARCHIVE_FIELDS,
  ArchiveView,
  exportArchive,
  unzipAll,
  uploadArchive,
  zipOf,
} from '../support/archives.js';

/**
 * An uploaded archive is checked whole before anything of it is kept, and refused with a clear
 * error (extensions.code, reason, field): not a ZIP, not a Keepsake archive, a later version,
 * too many files, more bytes unpacked than allowed (declared, or hidden by a lying entry), a
 * name that climbs out of its folder, a body over the limit. A line that turns out bad while
 * importing fails the import with its place named, and leaves no legacy behind.
 */

/** Says, in the ZIP's central directory, that `name` unpacks to `size` bytes. */
function declareSize(zip: Buffer, name: string, size: number): Buffer {
  const copy = Buffer.from(zip);
  for (let i = copy.length - 46; i >= 0; i--) {
    if (copy.readUInt32LE(i) !== 0x02014b50) continue;
    const nameLength = copy.readUInt16LE(i + 28);
    if (copy.toString('utf8', i + 46, i + 46 + nameLength) === name) {
      copy.writeUInt32LE(size, i + 24);
      return copy;
    }
  }
  throw new Error(`no ${name} in the central directory`);
}

/** Renames a file in place (local header and central directory), to a name of the same length. */
function rename(zip: Buffer, from: string, to: string): Buffer {
  const copy = Buffer.from(zip);
  const a = Buffer.from(from);
  for (let i = copy.indexOf(a); i !== -1; i = copy.indexOf(a, i + 1)) copy.write(to, i);
  return copy;
}

describe('legacy archives: checking what is imported', () => {
  let t: TestApp;
  let jobs: JobsService;
  let user: TestUser;
  let valid: Map<string, Buffer>;

  const refused = async (
    zip: Buffer,
    status: number,
    code: string,
    reason: string,
    field = 'file',
  ) => {
    const res = await uploadArchive(t, user, zip);
    expect(res.status).toBe(status);
    const error = (
      res.body.errors as { message: string; extensions: Record<string, unknown> }[]
    )[0];
    expect(error.extensions).toMatchObject({ code, reason, field });
    return error.message;
  };
  /** The valid archive with some of its files replaced. */
  const variant = (changes: Record<string, string | Buffer | null>) => {
    const files: Record<string, string | Buffer> = {};
    for (const [name, bytes] of valid) files[name] = bytes;
    for (const [name, bytes] of Object.entries(changes)) {
      if (bytes === null) delete files[name];
      else files[name] = bytes;
    }
    return zipOf(files);
  };

  beforeAll(async () => {
    t = await startTestApp({
      AGENT_REPLY: 'off',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      ARCHIVE_IMPORT_MAX_ENTRIES: '40',
      ARCHIVE_IMPORT_MAX_UNZIPPED_BYTES: '2mb',
      ARCHIVE_IMPORT_MAX_BYTES: '1mb',
      // An import gives way to a waiting archive job at its first chance.
      ARCHIVE_IMPORT_SLICE_MS: '1',
    });
    jobs = t.app.get(JobsService);
    user = await t.user('archives-import-user', { email: 'user@archives-import.example.com' });
    const legacy = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Uncle Ned", description: "A sailor." }) { id } }',
      {},
      user,
    );
    const legacyId = legacy.data!.createLegacy.id;
    await t.gql(
      `mutation($l: ID!) { addFact(input: { legacyId: $l, content: "Ned sailed to Lisbon twice.", category: MILESTONE }) { id } }`,
      { l: legacyId },
      user,
    );
    valid = await unzipAll((await exportArchive(t, user, legacyId)).zip);
  }, 300_000);
  afterAll(() => t?.close());

  it('refuses a file that is not a ZIP', async () => {
    await refused(
      Buffer.from('just some text, not a zip'),
      400,
      'BAD_USER_INPUT',
      'INVALID_ARCHIVE',
    );
  });

  it('refuses a ZIP that is not a Keepsake archive', async () => {
    const message = await refused(
      await zipOf({ 'photo.txt': 'hello' }),
      400,
      'BAD_USER_INPUT',
      'UNSUPPORTED_ARCHIVE',
    );
    expect(message).toContain('keepsake.json');
    const manifest = JSON.parse(valid.get('keepsake.json')!.toString('utf8'));
    await refused(
      await variant({ 'keepsake.json': JSON.stringify({ ...manifest, format: 'something.else' }) }),
      400,
      'BAD_USER_INPUT',
      'UNSUPPORTED_ARCHIVE',
      'format',
    );
  });

  it('refuses a later version of the format, saying what to do', async () => {
    const manifest = JSON.parse(valid.get('keepsake.json')!.toString('utf8'));
    const message = await refused(
      await variant({ 'keepsake.json': JSON.stringify({ ...manifest, version: 2 }) }),
      400,
      'BAD_USER_INPUT',
      'UNSUPPORTED_ARCHIVE',
      'version',
    );
    expect(message).toContain('newer Keepsake');
  });

  it('refuses an archive missing a part', async () => {
    await refused(
      await variant({ 'data/turns.jsonl': null }),
      400,
      'BAD_USER_INPUT',
      'INVALID_ARCHIVE',
    );
  });

  it('refuses too many files, and a ZIP bomb declared or hidden', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 50; i++) many[`stories/x${i}.html`] = 'x';
    await refused(await variant(many), 400, 'BAD_USER_INPUT', 'TOO_LARGE');
    // 3 MB of zeros deflate to a few KB: declared, it is over the 2 MB unpacked.
    const zeros = Buffer.alloc(3 * 1024 * 1024);
    await refused(await variant({ 'index.html': zeros }), 400, 'BAD_USER_INPUT', 'TOO_LARGE');
    // The same, declaring 100 bytes: caught as it is unpacked, and the import fails whole.
    const lying = declareSize(
      await variant({ 'data/facts.jsonl': zeros }),
      'data/facts.jsonl',
      100,
    );
    const uploaded = await uploadArchive(t, user, lying);
    expect(uploaded.status).toBe(201);
    const done = await importOf(uploaded.body.id as string);
    expect(done.status).toBe('FAILED');
    expect(done.failureCode).toMatch(/INVALID_ARCHIVE|TOO_LARGE/);
    expect(done.legacyId).toBeNull();
  });

  it('refuses a name that climbs out of its folder', async () => {
    // yazl will not write such a name: it is put in afterwards.
    const zip = rename(
      await variant({ 'xx/xx/etc/evil.txt': 'x' }),
      'xx/xx/etc/evil.txt',
      '../../etc/evil.txt',
    );
    await refused(zip, 400, 'BAD_USER_INPUT', 'INVALID_ARCHIVE');
  });

  it('refuses a body over ARCHIVE_IMPORT_MAX_BYTES before reading it', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024, 7);
    const message = await refused(big, 400, 'BAD_USER_INPUT', 'TOO_LARGE');
    expect(message).toContain('ARCHIVE_IMPORT_MAX_BYTES');
  });

  async function importOf(id: string): Promise<ArchiveView> {
    const res = await t.gql<{ importLegacyArchive: ArchiveView }>(
      `mutation($id: ID!) { importLegacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
      { id },
      user,
    );
    expect(res.errors).toBeUndefined();
    await jobs.drain();
    const done = await t.gql<{ legacyArchive: ArchiveView }>(
      `query($id: ID!) { legacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
      { id },
      user,
    );
    return done.data!.legacyArchive;
  }

  it('fails an import whose line is bad, naming it, and leaves no legacy behind', async () => {
    const ds = t.app.get(DataSource);
    const legacies = async () =>
      (await ds.query('SELECT count(*)::int AS n FROM legacies'))[0].n as number;
    const before = await legacies();
    const facts = valid.get('data/facts.jsonl')!.toString('utf8');
    const uploaded = await uploadArchive(
      t,
      user,
      await variant({ 'data/facts.jsonl': `${facts}{"id":"x","content":42}\n` }),
    );
    expect(uploaded.status).toBe(201);
    const done = await importOf(uploaded.body.id as string);
    expect(done).toMatchObject({
      status: 'FAILED',
      failureCode: 'INVALID_ARCHIVE',
      legacyId: null,
    });
    expect(done.failureReason).toContain('data/facts.jsonl, line 2');
    expect(await legacies()).toBe(before);
    // Imported again: refused, it is done with.
    const again = await t.gql(
      'mutation($id: ID!) { importLegacyArchive(id: $id) { id } }',
      { id: uploaded.body.id },
      user,
    );
    expect(again.errors![0].extensions).toMatchObject({
      code: 'CONFLICT',
      reason: 'ALREADY_IMPORTED',
    });
  });

  it('imports the valid archive, once', async () => {
    const uploaded = await uploadArchive(t, user, await variant({}));
    const done = await importOf(uploaded.body.id as string);
    expect(done).toMatchObject({ status: 'COMPLETED', counts: { facts: 1 } });
    const facts = await t.gql<{ facts: { nodes: { content: string }[] } }>(
      'query($l: ID!) { facts(legacyId: $l) { nodes { content } } }',
      { l: done.legacyId },
      user,
    );
    expect(facts.data!.facts.nodes.map((f) => f.content)).toEqual(['Ned sailed to Lisbon twice.']);
    const twice = await t.gql(
      'mutation($id: ID!) { importLegacyArchive(id: $id) { id } }',
      { id: uploaded.body.id },
      user,
    );
    expect(twice.errors![0].extensions).toMatchObject({
      code: 'CONFLICT',
      reason: 'ALREADY_IMPORTED',
    });
  });

  it('gives way to another family’s export between batches, and goes on from where it stopped', async () => {
    const other = await t.user('archives-import-other');
    const legacy = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Cousin May" }) { id } }',
      {},
      other,
    );
    const uploaded = await uploadArchive(t, user, await variant({}));
    const importId = uploaded.body.id as string;
    const started = await t.gql(
      'mutation($id: ID!) { importLegacyArchive(id: $id) { id } }',
      { id: importId },
      user,
    );
    expect(started.errors).toBeUndefined();
    // Asked for after the import: with one archive slot, it waits for the import to give way.
    const asked = await t.gql<{ exportLegacyArchive: { id: string } }>(
      'mutation($l: ID!) { exportLegacyArchive(legacyId: $l) { id } }',
      { l: legacy.data!.createLegacy.id },
      other,
    );
    const exportId = asked.data!.exportLegacyArchive.id;
    await jobs.drain();
    const finished = new Map<string, Date>(
      (
        (await t.app
          .get(DataSource)
          .query('SELECT id, finished_at FROM legacy_archives WHERE id = ANY($1)', [
            [importId, exportId],
          ])) as { id: string; finished_at: Date }[]
      ).map((r) => [r.id, new Date(r.finished_at)]),
    );
    expect(finished.get(exportId)!.getTime()).toBeLessThan(finished.get(importId)!.getTime());
    const done = await t.gql<{ legacyArchive: ArchiveView }>(
      `query($id: ID!) { legacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
      { id: importId },
      user,
    );
    expect(done.data!.legacyArchive).toMatchObject({ status: 'COMPLETED', counts: { facts: 1 } });
    // Gone on with from its cursor: each item once.
    const facts = await t.gql<{ facts: { nodes: { content: string }[] } }>(
      'query($l: ID!) { facts(legacyId: $l) { nodes { content } } }',
      { l: done.data!.legacyArchive.legacyId },
      user,
    );
    expect(facts.data!.facts.nodes.map((f) => f.content)).toEqual(['Ned sailed to Lisbon twice.']);
  });
});
