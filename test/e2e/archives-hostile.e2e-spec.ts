import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  ARCHIVE_FIELDS,
  archiveOf,
  archiveVariant,
  ArchiveView,
  exportArchive,
  jsonLines,
  ManifestJson,
  unzipAll,
  until,
  uploadArchive,
} from '../support/archives.js';

/**
 * Archives made to hurt (issue 44): a ZIP whose part unpacks to 64 MB of blank lines, one that
 * holds more conversations than a day allows or a conversation longer than importConversation
 * takes, one whose values PostgreSQL cannot store (a date 100,000 years BC, a NUL, a lone
 * surrogate), and originals a browser would run (svg, html). Each is refused or fails at once,
 * with Keepsake's own sentence naming the file and line, and none of them holds up another
 * family's background work. The job worker runs here as in production (JOBS_WORKER), with the
 * limits made small so that the archives stay small.
 */
const RAW_DATABASE_TEXT =
  /out of range:|invalid byte sequence|unicode escape|violates|syntax error|relation "|column "|QueryFailed/i;

describe('legacy archives: hostile archives', () => {
  let t: TestApp;
  let jobs: JobsService;
  let ds: DataSource;
  let owner: TestUser;
  let other: TestUser;
  let otherLegacyId: string;
  let valid: Map<string, Buffer>;
  let n = 0;

  beforeAll(async () => {
    t = await startTestApp({
      AGENT_REPLY: 'off',
      JOBS_SCHEDULER: 'false',
      CONVERSATIONS_PER_USER_PER_DAY: '10',
      IMPORT_MAX_MESSAGES: '50',
      // On the code before issue 44 a failure was tried JOBS_MAX_ATTEMPTS times: quickly here.
      JOBS_RETRY_BASE_MS: '10',
    });
    jobs = t.app.get(JobsService);
    ds = t.app.get(DataSource);
    owner = await t.user('hostile-owner', { email: 'owner@hostile.example.com' });
    other = await t.user('hostile-other', { email: 'other@hostile.example.com' });
    const legacy = async (as: TestUser, name: string) => {
      const res = await t.gql<{ createLegacy: { id: string } }>(
        'mutation($n: String!) { createLegacy(input: { name: $n }) { id } }',
        { n: name },
        as,
      );
      return res.data!.createLegacy.id;
    };
    const legacyId = await legacy(owner, 'Aunt Bea');
    for (const query of [
      'mutation($l: ID!) { addFact(input: { legacyId: $l, content: "Bea played the cello.", category: HOBBY }) { id } }',
      'mutation($l: ID!) { addStory(input: { legacyId: $l, title: "The cello", content: "She played every Sunday." }) { id } }',
      `mutation($l: ID!) { importConversation(input: { legacyId: $l, title: "Sundays", messages: [
         { role: USER, content: "Bea played after lunch.", occurredAt: "2025-03-02T10:00:00Z" },
         { role: ASSISTANT, content: "Tell me more.", occurredAt: "2025-03-02T10:01:00Z" }] }) { importedCount } }`,
    ]) {
      const res = await t.gql(query, { l: legacyId }, owner);
      expect(res.errors).toBeUndefined();
    }
    otherLegacyId = await legacy(other, 'Uncle Tom');
    await t.gql(
      'mutation($l: ID!) { addFact(input: { legacyId: $l, content: "Tom mended clocks.", category: HOBBY }) { id } }',
      { l: otherLegacyId },
      other,
    );
    await jobs.drain();
    valid = await unzipAll((await exportArchive(t, owner, legacyId)).zip);
  }, 300_000);
  afterAll(() => t?.close());

  /** A member of their own for each import: the daily limits are each one's. */
  const importer = () => t.user(`hostile-importer-${++n}`);
  const template = <T = Record<string, unknown>>(part: string) =>
    jsonLines<T>(valid, `data/${part}.jsonl`)[0];

  async function startImport(as: TestUser, zip: Buffer): Promise<string> {
    const uploaded = await uploadArchive(t, as, zip);
    expect(uploaded).toMatchObject({ status: 201 });
    const res = await t.gql(
      'mutation($id: ID!) { importLegacyArchive(id: $id) { id } }',
      { id: uploaded.body.id },
      as,
    );
    expect(res.errors).toBeUndefined();
    return uploaded.body.id as string;
  }

  /** Imports and waits for the import to finish; the archive, and its job's attempts. */
  async function imported(as: TestUser, zip: Buffer): Promise<ArchiveView & { attempts: number }> {
    const id = await startImport(as, zip);
    const done = await until(
      async () => {
        const a = await archiveOf(t, as, id);
        return a.status === 'COMPLETED' || a.status === 'FAILED' ? a : undefined;
      },
      120_000,
      'the import to finish',
    );
    await jobs.drain({ types: ['archives:import'] });
    const [job] = await ds.query(
      `SELECT attempts FROM jobs WHERE type = 'archives:import' AND key = $1`,
      [id],
    );
    return { ...done, attempts: job.attempts as number };
  }

  async function refusedUpload(zip: Buffer, reason: string) {
    const res = await uploadArchive(t, await importer(), zip);
    expect(res.status).toBe(400);
    const [error] = res.body.errors as { message: string; extensions: Record<string, unknown> }[];
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason });
    return error.message;
  }

  const legacies = async () =>
    (await ds.query('SELECT count(*)::int AS n FROM legacies'))[0].n as number;

  it('fails a part of blank lines at once, and another family’s export is not held behind it', async () => {
    // 64 MB of newlines deflate to about 64 KB: the ZIP is small, the part is not.
    const facts = valid.get('data/facts.jsonl')!;
    const zip = await archiveVariant(valid, {
      files: { 'data/facts.jsonl': Buffer.concat([facts, Buffer.alloc(64 * 1024 * 1024, 10)]) },
    });
    expect(zip.length).toBeLessThan(200 * 1024);
    const as = await importer();
    const importStarted = performance.now();
    const id = await startImport(as, zip);
    // The import has begun (or already ended): then another family asks for its export.
    await until(
      async () => ((await archiveOf(t, as, id)).status === 'QUEUED' ? undefined : true),
      60_000,
      'the import to start',
    );
    const asked = await t.gql<{ exportLegacyArchive: ArchiveView }>(
      'mutation($l: ID!) { exportLegacyArchive(legacyId: $l) { id } }',
      { l: otherLegacyId },
      other,
    );
    const exportStarted = performance.now();
    const exported = await until(
      async () => {
        const a = await archiveOf(t, other, asked.data!.exportLegacyArchive.id);
        return a.status === 'COMPLETED' || a.status === 'FAILED' ? a : undefined;
      },
      120_000,
      'the export',
    );
    const exportMs = performance.now() - exportStarted;
    const failed = await until(
      async () => {
        const a = await archiveOf(t, as, id);
        return a.status === 'COMPLETED' || a.status === 'FAILED' ? a : undefined;
      },
      120_000,
      'the import to end',
    );
    const importMs = performance.now() - importStarted;
    console.log(
      `blank-line archive: import ended (${failed.status}) in ${Math.round(importMs)} ms; ` +
        `another family's export finished ${Math.round(exportMs)} ms after it was asked for`,
    );
    expect(exported.status).toBe('COMPLETED');
    // Generous for a shared machine (about 1 s alone; 4.7 s at a load of 38 on 2 cores): the
    // code before issue 44 took 28 s here on a quiet machine, 254 s on a busy one.
    expect(exportMs).toBeLessThan(15_000);
    expect(failed).toMatchObject({
      status: 'FAILED',
      failureCode: 'INVALID_ARCHIVE',
      legacyId: null,
    });
    expect(failed.failureReason).toMatch(/^data\/facts\.jsonl has more than \d+ blank lines/);
    expect(importMs).toBeLessThan(15_000);
    // Long enough for the code before issue 44 to show its figures rather than time out.
  }, 240_000);

  it('refuses an archive of more conversations than a member may import in a day', async () => {
    const conversation = template('conversations');
    const turn = template('turns');
    const conversations = Array.from({ length: 12 }, (_, i) => ({
      ...conversation,
      id: `c${i}`,
      turnCount: 1,
    }));
    const turns = conversations.map((c) => ({
      ...turn,
      id: `t-${c.id}`,
      conversationId: c.id,
      turnIndex: 0,
    }));
    const message = await refusedUpload(
      await archiveVariant(valid, { parts: { conversations, turns } }),
      'TOO_LARGE',
    );
    expect(message).toContain('12 conversations');
    expect(message).toContain('CONVERSATIONS_PER_USER_PER_DAY');
  });

  it('counts the conversations it imports against the same daily limit as startConversation', async () => {
    const conversation = template('conversations');
    const turn = template('turns');
    const three = Array.from({ length: 3 }, (_, i) => ({
      ...conversation,
      id: `c${i}`,
      turnCount: 1,
    }));
    const zip = await archiveVariant(valid, {
      parts: {
        conversations: three,
        turns: three.map((c) => ({ ...turn, id: `t-${c.id}`, conversationId: c.id, turnIndex: 0 })),
      },
    });
    const as = await importer();
    const done = await imported(as, zip);
    expect(done).toMatchObject({ status: 'COMPLETED', counts: { conversations: 3 } });
    const start = () =>
      t.gql(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: done.legacyId },
        as,
      );
    for (let i = 0; i < 7; i++) expect((await start()).errors).toBeUndefined();
    const eighth = await start();
    expect(eighth.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED' });

    // A member whose day has room for fewer than the archive holds is told so when they ask,
    // and the upload waits for them.
    const busy = await importer();
    const uploaded = await uploadArchive(t, busy, zip);
    expect(uploaded.status).toBe(201);
    const ownLegacy = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Busy" }) { id } }',
      {},
      busy,
    );
    for (let i = 0; i < 8; i++) {
      const res = await t.gql(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: ownLegacy.data!.createLegacy.id },
        busy,
      );
      expect(res.errors).toBeUndefined();
    }
    const refused = await t.gql(
      'mutation($id: ID!) { importLegacyArchive(id: $id) { id } }',
      { id: uploaded.body.id },
      busy,
    );
    expect(refused.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused.errors![0].message).toContain('3 conversations');
    expect((await archiveOf(t, busy, uploaded.body.id as string)).status).toBe('UPLOADED');
  });

  it('holds a conversation to IMPORT_MAX_MESSAGES turns, declared or not', async () => {
    const conversation = { ...template('conversations'), id: 'long' };
    const turn = template('turns');
    const turns = Array.from({ length: 51 }, (_, i) => ({
      ...turn,
      id: `t${i}`,
      conversationId: 'long',
      turnIndex: i,
    }));
    // Declared in conversations.jsonl: refused at upload.
    const declared = await refusedUpload(
      await archiveVariant(valid, {
        parts: { conversations: [{ ...conversation, turnCount: 51 }], turns },
      }),
      'TOO_LARGE',
    );
    expect(declared).toContain('IMPORT_MAX_MESSAGES');
    // Hidden (declared as 2): the import stops at the cap, and leaves no legacy.
    const before = await legacies();
    const done = await imported(
      await importer(),
      await archiveVariant(valid, {
        parts: { conversations: [{ ...conversation, turnCount: 2 }], turns },
      }),
    );
    expect(done).toMatchObject({ status: 'FAILED', legacyId: null, attempts: 1 });
    expect(done.failureReason).toMatch(/^data\/turns\.jsonl, lines? \d+/);
    expect(done.failureReason).toContain('50 turns');
    expect(await legacies()).toBe(before);
  });

  it('fails once, with its own sentence naming the line, for a value the database cannot keep', async () => {
    const fact = template('facts');
    const turn = template('turns');
    const cases: [string, Parameters<typeof archiveVariant>[1], RegExp, string][] = [
      [
        'a date 100,000 years BC',
        { parts: { facts: [{ ...fact, validFrom: '-100000-01-01T00:00:00.000Z' }] } },
        /^data\/facts\.jsonl, line 1: validFrom .*year/,
        'INVALID_ARCHIVE',
      ],
      [
        'a NUL in a turn',
        { parts: { turns: [{ ...turn, content: 'before\u0000after' }] } },
        /^data\/turns\.jsonl, line 1: content .*NUL/,
        'INVALID_ARCHIVE',
      ],
      [
        'a NUL in a turn’s metadata',
        { parts: { turns: [{ ...turn, metadata: { note: 'x\u0000y' } }] } },
        /^data\/turns\.jsonl, line 1: metadata\.note .*NUL/,
        'INVALID_ARCHIVE',
      ],
      [
        'a lone surrogate',
        { parts: { facts: [{ ...fact, content: 'half \ud800 a character' }] } },
        /^data\/facts\.jsonl, line 1: content .*character/,
        'INVALID_ARCHIVE',
      ],
      [
        'a fact longer than a fact may be',
        { parts: { facts: [{ ...fact, content: 'x'.repeat(1500) }] } },
        /^data\/facts\.jsonl, line 1: A fact has at most \d+ characters/,
        'INVALID_FACT',
      ],
    ];
    const before = await legacies();
    for (const [what, change, reason, code] of cases) {
      const done = await imported(await importer(), await archiveVariant(valid, change));
      expect({ what, ...done }).toMatchObject({
        what,
        status: 'FAILED',
        failureCode: code,
        legacyId: null,
        attempts: 1,
      });
      expect(done.failureReason).toMatch(reason);
      expect(done.failureReason).not.toMatch(RAW_DATABASE_TEXT);
    }
    expect(await legacies()).toBe(before);
  });

  it('refuses at upload a manifest the database could not keep', async () => {
    for (const [change, field] of [
      [(m: ManifestJson) => (m.legacy.name = 'Bea\u0000'), 'legacy.name'],
      [(m: ManifestJson) => (m.legacy.bornOn = '1931-13-45'), 'legacy.bornOn'],
    ] as const) {
      const message = await refusedUpload(
        await archiveVariant(valid, { manifest: change }),
        'INVALID_ARCHIVE',
      );
      expect(message).toContain(`keepsake.json: ${field}`);
      expect(message).not.toMatch(RAW_DATABASE_TEXT);
    }
  });

  it('refuses a part with more or fewer lines than keepsake.json declares', async () => {
    const fact = template('facts');
    const more = await imported(
      await importer(),
      await archiveVariant(valid, {
        parts: { facts: [fact, { ...fact, id: 'f2' }] },
        manifest: (m) => (m.parts.facts.count = 1),
      }),
    );
    expect(more).toMatchObject({ status: 'FAILED', failureCode: 'INVALID_ARCHIVE', attempts: 1 });
    expect(more.failureReason).toContain('data/facts.jsonl, line 2: keepsake.json declares 1 line');
    const fewer = await imported(
      await importer(),
      await archiveVariant(valid, {
        parts: { facts: [fact] },
        manifest: (m) => (m.parts.facts.count = 2),
      }),
    );
    expect(fewer).toMatchObject({ status: 'FAILED', failureCode: 'INVALID_ARCHIVE', attempts: 1 });
    expect(fewer.failureReason).toContain(
      'data/facts.jsonl holds 1 line; keepsake.json declares 2',
    );
  });

  it('takes only the types an upload takes: no svg, html or xml document, uploaded or imported', async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg"><script>document.title="ran"</script></svg>';
    const upload = async (name: string, type: string, content: string) => {
      const form = new FormData();
      form.append('file', new Blob([content], { type }), name);
      const res = await fetch(new URL(`/legacies/${otherLegacyId}/documents`, t.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${other.token}` },
        body: form,
      });
      return {
        status: res.status,
        body: (await res.json()) as { errors?: { message: string; extensions: object }[] },
      };
    };
    for (const [name, type] of [
      ['drawing.svg', 'image/svg+xml'],
      ['drawing.svg', 'text/plain'],
      ['notes.xml', 'text/xml'],
      ['notes.txt', 'image/svg+xml'],
    ]) {
      const res = await upload(name, type, svg);
      expect({ name, type, status: res.status }).toEqual({ name, type, status: 400 });
      expect(res.body.errors![0].extensions).toMatchObject({ reason: 'UNREADABLE_DOCUMENT' });
    }
    // The same text as a .txt is a text, kept as one.
    expect((await upload('drawing.txt', 'text/plain', svg)).status).toBe(201);

    const story = template<Record<string, unknown>>('stories');
    for (const [fileName, content, says] of [
      ['page.html', '<html><body><script>document.title="ran"</script></body></html>', /web page/],
      ['drawing.svg', svg, /\.svg/],
    ] as const) {
      const file = `stories/${story.id}/${fileName}`;
      const done = await imported(
        await importer(),
        await archiveVariant(valid, {
          parts: { stories: [{ ...story, fileName, file, format: 'TEXT', mimeType: 'text/html' }] },
          files: { [story.file as string]: null, [file]: content },
        }),
      );
      // The same refusal as an upload of that file, placed.
      expect(done).toMatchObject({
        status: 'FAILED',
        failureCode: 'UNREADABLE_DOCUMENT',
        attempts: 1,
      });
      expect(done.failureReason).toMatch(/^data\/stories\.jsonl, line 1: /);
      expect(done.failureReason).toMatch(says);
    }
  });

  it('answers importLegacyArchive with the archive as before', async () => {
    // The valid archive still imports whole, with the limits above in force.
    const done = await imported(await importer(), await archiveVariant(valid, {}));
    expect(done).toMatchObject({
      status: 'COMPLETED',
      counts: { facts: 1, stories: 1, conversations: 1, turns: 2 },
      attempts: 1,
    });
    const res = await t.gql(
      `query($id: ID!) { legacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
      { id: done.id },
      owner,
    );
    expect(res.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
  });
});
