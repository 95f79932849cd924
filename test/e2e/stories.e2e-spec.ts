import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import PDFDocument from 'pdfkit';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { buildSchema, getNamedType, GraphQLObjectType, isCompositeType } from 'graphql';
import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { joinLegacy } from '../support/membership.js';
import { startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';

/**
 * Stories and documents as the frontend uses them: a real multi-page PDF and a DOCX made here,
 * uploaded over HTTP, indexed in the background, found in recall with their page, shared with
 * the family, and deleted with every trace.
 */

function makePdf(pages: string[], options: PDFKit.PDFDocumentOptions = {}): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      compress: true,
      info: { Title: 'Letters from Rose' },
      ...options,
    });
    const parts: Buffer[] = [];
    doc.on('data', (part: Buffer) => parts.push(part));
    doc.on('end', () => resolve(new Uint8Array(Buffer.concat(parts))));
    doc.on('error', reject);
    pages.forEach((text, i) => {
      if (i > 0) doc.addPage();
      doc.fontSize(12).text(text);
    });
    doc.end();
  });
}

async function makeDocx(): Promise<Uint8Array> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'The eulogy', heading: HeadingLevel.HEADING_1 }),
          new Paragraph(
            'Rose taught every child on Harbour Street to sail a dinghy against the wind.',
          ),
          new Paragraph('She kept a jar of sea glass on the kitchen windowsill for forty years.'),
          new Paragraph('Rose was born in Cork in 1931.'),
          new Paragraph('Rose worked as a lighthouse keeper for thirty years.'),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}

const PAGE_SEVEN =
  'On the seventh page Rose wrote that the blue hydrangeas by the lighthouse bloomed late.';
const PAGES = Array.from({ length: 10 }, (_, i) =>
  i === 6
    ? PAGE_SEVEN
    : `Page ${i + 1}: an ordinary day of letters about weather, bread and the neighbours' cat number ${i}.`,
);

describe('stories and documents', () => {
  let t: TestApp;
  let ds: DataSource;
  let jobs: JobsService;
  let author: TestUser;
  let other: TestUser;
  let legacyId: string;
  let base: string;

  const ok = async <T>(query: string, variables: Record<string, unknown>, as: TestUser) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };

  async function upload(
    as: TestUser | null,
    bytes: Uint8Array,
    fileName: string,
    fields: Record<string, string> = {},
    legacy = legacyId,
  ) {
    const form = new FormData();
    form.append('file', new Blob([bytes]), fileName);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(`${base}/legacies/${legacy}/documents`, {
      method: 'POST',
      headers: as ? { authorization: `Bearer ${as.token}` } : {},
      body: form,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const recall = (as: TestUser, query: string) =>
    ok<{
      recall: {
        edges: {
          node: {
            id: string;
            sourceType: string;
            sourceId: string;
            text: string;
            forgettable: boolean;
            provenance: { story: { storyId: string; title: string; page: number } | null };
          };
        }[];
      };
    }>(
      `query($l: ID!, $q: String!) { recall(legacyId: $l, query: $q) { edges { node {
         id sourceType sourceId text forgettable provenance { story { storyId title page } } } } } }`,
      { l: legacyId, q: query },
      as,
    ).then((d) => d.recall.edges.map((e) => e.node));

  const traces = async (storyId: string) => {
    const [row] = await ds.query<
      { stories: number; chunks: number; files: number; vectors: number }[]
    >(
      `SELECT (SELECT count(*)::int FROM stories WHERE id = $1) AS stories,
              (SELECT count(*)::int FROM story_chunks WHERE story_id = $1) AS chunks,
              (SELECT count(*)::int FROM story_files WHERE story_id = $1) AS files,
              (SELECT count(*)::int FROM embeddings e WHERE e.kind = 'story'
                  AND NOT EXISTS (SELECT 1 FROM story_chunks c WHERE c.id = e.item_id)) AS vectors`,
      [storyId],
    );
    return row;
  };

  beforeAll(async () => {
    t = await startTestApp({
      AGENT_REPLY: 'off',
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      DOCUMENT_MAX_BYTES: String(400 * 1024),
      MEMBER_STORAGE_MAX_BYTES: String(1024 * 1024),
    });
    ds = t.app.get(DataSource);
    jobs = t.app.get(JobsService);
    base = t.url.replace(/\/graphql$/, '');
    author = await t.user('stories-author', { email: 'author@stories.example.com' });
    other = await t.user('stories-other', { email: 'other@stories.example.com' });
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Rose" }) { id } }',
        {},
        author,
      )
    ).createLegacy.id;
    await joinLegacy(t, author, legacyId, other);
  });
  afterAll(() => t?.close());

  let pdfId: string;

  it('uploads a ten-page PDF, indexes it in the background and finds page seven in recall', async () => {
    const pdf = await makePdf(PAGES);
    const res = await upload(author, pdf, 'letters.pdf');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      title: 'Letters from Rose',
      kind: 'DOCUMENT',
      format: 'PDF',
      visibility: 'PRIVATE',
      status: 'PROCESSING',
      pageCount: 10,
      sizeBytes: pdf.byteLength,
    });
    pdfId = res.body.id as string;
    await jobs.drain();
    const { story } = await ok<{
      story: {
        status: string;
        indexedChunks: number;
        totalChunks: number;
        pages: { number: number; text: string }[];
      };
    }>(
      'query($id: ID!) { story(id: $id) { status indexedChunks totalChunks pages(from: 7, count: 1) { number text } } }',
      { id: pdfId },
      author,
    );
    expect(story.status).toBe('READY');
    expect(story.totalChunks).toBeGreaterThanOrEqual(10);
    expect(story.indexedChunks).toBe(story.totalChunks);
    // pdfkit wraps the line: the page's words, in order.
    expect(story.pages.map((p) => ({ ...p, text: p.text.replace(/\s+/g, ' ') }))).toEqual([
      { number: 7, text: PAGE_SEVEN },
    ]);

    const found = await recall(author, 'blue hydrangeas by the lighthouse');
    expect(found[0]).toMatchObject({
      sourceType: 'STORY',
      forgettable: true,
      provenance: { story: { storyId: pdfId, title: 'Letters from Rose', page: 7 } },
    });
    expect(found[0].text).toContain('blue hydrangeas');
  });

  it('keeps a private story from the family until it is shared, then lets them find and download it', async () => {
    expect(JSON.stringify(await recall(other, 'blue hydrangeas by the lighthouse'))).not.toContain(
      'hydrangeas',
    );
    const download = (as: TestUser) =>
      fetch(`${base}/stories/${pdfId}/file`, { headers: { authorization: `Bearer ${as.token}` } });
    expect((await download(other)).status).toBe(404);

    const events = subscribe<{ storyChanged: { change: string; storyId: string } }>(
      t.ws(other),
      'subscription($l: ID!) { storyChanged(legacyId: $l) { change storyId } }',
      { l: legacyId },
    );
    await events.ready;
    await ok(
      'mutation($id: ID!) { setStoryVisibility(id: $id, visibility: SHARED) { visibility } }',
      { id: pdfId },
      author,
    );
    await events.waitFor(1);
    expect(events.events[0].data!.storyChanged).toEqual({
      change: 'VISIBILITY_CHANGED',
      storyId: pdfId,
    });

    const theirs = await recall(other, 'blue hydrangeas by the lighthouse');
    expect(theirs[0]).toMatchObject({
      sourceType: 'STORY',
      forgettable: false,
      provenance: { story: { storyId: pdfId, page: 7 } },
    });
    const file = await download(other);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toContain('application/pdf');
    expect(new Uint8Array(await file.arrayBuffer()).byteLength).toBe(
      (
        await ds.query(`SELECT length(content) AS n FROM story_files WHERE story_id = $1`, [pdfId])
      )[0].n,
    );
    // Forgetting another member's story from recall is not theirs to do.
    const forget = await t.gql(
      'mutation($id: ID!) { forgetRecallItem(id: $id, confirm: true) { forgotten } }',
      { id: theirs[0].id },
      other,
    );
    expect(forget.errors![0].extensions).toMatchObject({ code: 'FORBIDDEN' });
  });

  it('gives the agent the passage in a stories section, with its page', async () => {
    const conversation = await ok<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: legacyId },
      other,
    );
    const { context } = await ok<{
      context: {
        sections: { name: string; items: { provenance: { story: { page: number } } }[] }[];
        system: string;
      };
    }>(
      'query($c: ID!) { context(conversationId: $c, query: "Where did the blue hydrangeas grow?") { system sections { name items { provenance { story { page } } } } } }',
      { c: conversation.startConversation.id },
      other,
    );
    const stories = context.sections.find((s) => s.name === 'STORIES');
    expect(stories?.items[0].provenance.story.page).toBe(7);
    expect(context.system).toContain('"Letters from Rose", p. 7');
  });

  it('reads a DOCX made here, headings included', async () => {
    const res = await upload(author, await makeDocx(), 'eulogy.docx', { title: 'Eulogy for Rose' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'Eulogy for Rose', format: 'DOCX', pageCount: 1 });
    await jobs.drain();
    const found = await recall(author, 'sea glass windowsill');
    expect(found[0]).toMatchObject({
      sourceType: 'STORY',
      provenance: { story: { title: 'Eulogy for Rose', page: 1 } },
    });
  });

  it('reads facts from a story once, pointing at its page, and they go with the story', async () => {
    const docx = await upload(author, await makeDocx(), 'eulogy-2.docx', {
      title: 'Eulogy, second copy',
    });
    await jobs.drain();
    const id = docx.body.id as string;
    const extract = () =>
      ok<{ extractStory: { passagesRead: number; factsFound: number; remaining: number } }>(
        'mutation($id: ID!) { extractStory(id: $id) { passagesRead factsFound remaining } }',
        { id },
        author,
      );
    const first = await extract();
    expect(first.extractStory.passagesRead).toBeGreaterThan(0);
    expect(first.extractStory.factsFound).toBeGreaterThanOrEqual(2);
    expect(first.extractStory.remaining).toBe(0);
    const facts = async () =>
      (
        await ok<{
          facts: {
            nodes: {
              content: string;
              visibility: string;
              sources: { kind: string; storyId: string; page: number }[];
            }[];
          };
        }>(
          'query($l: ID!) { facts(legacyId: $l, first: 50) { nodes { content visibility sources { kind storyId page } } } }',
          { l: legacyId },
          author,
        )
      ).facts.nodes;
    const born = (await facts()).find((f) => f.content.includes('born in Cork'));
    expect(born).toMatchObject({
      visibility: 'PRIVATE',
      sources: expect.arrayContaining([{ kind: 'STORY', storyId: id, page: 1 }]),
    });
    // A second run reads nothing again and changes nothing.
    const before = await ds.query(`SELECT id, mention_count, updated_at FROM facts ORDER BY id`);
    expect((await extract()).extractStory).toEqual({
      passagesRead: 0,
      factsFound: 0,
      remaining: 0,
    });
    expect(await ds.query(`SELECT id, mention_count, updated_at FROM facts ORDER BY id`)).toEqual(
      before,
    );
    // The other member never sees the author's private facts from it.
    const theirs = await t.gql(
      'mutation($id: ID!) { extractStory(id: $id) { factsFound } }',
      { id },
      other,
    );
    expect(theirs.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    // Deleting the story takes the facts known only from it, as it says before.
    const { story } = await ok<{ story: { wouldDelete: string } }>(
      'query($id: ID!) { story(id: $id) { wouldDelete } }',
      { id },
      author,
    );
    expect(story.wouldDelete).toMatch(/, and the facts known only from it\.$/);
    await ok('mutation($id: ID!) { deleteStory(id: $id) }', { id }, author);
    expect((await facts()).some((f) => f.content.includes('born in Cork'))).toBe(false);
  });

  it('refuses a file it cannot read, naming the problem, and stores nothing', async () => {
    const before = await ds.query(`SELECT count(*)::int AS n FROM stories`);
    const locked = await makePdf(PAGES, { userPassword: 'secret' });
    const encrypted = await upload(author, locked, 'locked.pdf');
    expect(encrypted.status).toBe(400);
    expect(encrypted.body).toMatchObject({
      errors: [
        { extensions: { code: 'BAD_USER_INPUT', reason: 'UNREADABLE_DOCUMENT', field: 'file' } },
      ],
    });
    expect(JSON.stringify(encrypted.body)).toMatch(/password/i);
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    const image = await upload(author, png, 'photo.png');
    expect(image.status).toBe(400);
    expect(JSON.stringify(image.body)).toMatch(/PNG/);
    const corrupt = await upload(author, (await makePdf(PAGES)).slice(0, 400), 'broken.pdf');
    expect(corrupt.status).toBe(400);
    const anonymous = await upload(null, await makePdf(PAGES), 'letters.pdf');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
    const outsider = await t.user('stories-outsider');
    const notMine = await upload(outsider, await makePdf(PAGES), 'letters.pdf');
    expect(notMine.status).toBe(404);
    expect(await ds.query(`SELECT count(*)::int AS n FROM stories`)).toEqual(before);
  });

  it('adds, edits and re-indexes a story written in the app', async () => {
    const { addStory } = await ok<{ addStory: { id: string; status: string; kind: string } }>(
      `mutation($l: ID!) { addStory(input: { legacyId: $l, title: "The boat", content: "# The boat\\n\\nRose named her boat Marigold after her mother." }) { id status kind } }`,
      { l: legacyId },
      author,
    );
    expect(addStory).toMatchObject({ status: 'PROCESSING', kind: 'STORY' });
    await jobs.drain();
    expect((await recall(author, 'Marigold boat'))[0].sourceType).toBe('STORY');
    await ok(
      'mutation($id: ID!) { updateStory(input: { id: $id, content: "Rose painted the shed a cheerful saffron yellow." }) { status } }',
      { id: addStory.id },
      author,
    );
    await jobs.drain();
    const after = await recall(author, 'saffron yellow shed');
    expect(after[0].text).toContain('saffron');
    expect(JSON.stringify(await recall(author, 'Marigold boat'))).not.toContain('Marigold');
  });

  it('deletes a story from recall only once confirmed, and every trace goes', async () => {
    const found = await recall(author, 'blue hydrangeas by the lighthouse');
    const asked = await ok<{
      forgetRecallItem: { forgotten: boolean; requiresConfirmation: boolean; wouldDelete: string };
    }>(
      'mutation($id: ID!) { forgetRecallItem(id: $id) { forgotten requiresConfirmation wouldDelete } }',
      { id: found[0].id },
      author,
    );
    expect(asked.forgetRecallItem).toMatchObject({ forgotten: false, requiresConfirmation: true });
    // The story says the same words before deleteStory (the console shows them): one source.
    const { story } = await ok<{ story: { wouldDelete: string } }>(
      'query($id: ID!) { story(id: $id) { wouldDelete } }',
      { id: pdfId },
      author,
    );
    expect(story.wouldDelete).toBe(
      'The document “Letters from Rose” (10 pages), its file and every passage indexed from it, and the facts known only from it.',
    );
    expect(asked.forgetRecallItem.wouldDelete).toBe(story.wouldDelete);
    expect((await traces(pdfId)).stories).toBe(1);
    const done = await ok<{ forgetRecallItem: { forgotten: boolean } }>(
      'mutation($id: ID!) { forgetRecallItem(id: $id, confirm: true) { forgotten } }',
      { id: found[0].id },
      author,
    );
    expect(done.forgetRecallItem.forgotten).toBe(true);
    expect(await traces(pdfId)).toEqual({ stories: 0, chunks: 0, files: 0, vectors: 0 });
    expect(JSON.stringify(await recall(other, 'blue hydrangeas by the lighthouse'))).not.toContain(
      'hydrangeas',
    );
  });

  /** A request that declares `length` bytes and sends none: answered before any is read. */
  function declareOnly(as: TestUser, length: number, legacy = legacyId) {
    return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const req = httpRequest(`${base}/legacies/${legacy}/documents`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${as.token}`,
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': String(length),
        },
      });
      const timer = setTimeout(() => {
        req.destroy();
        resolve({ status: 0, body: {} });
      }, 2000);
      req.on('response', (res) => {
        let text = '';
        res.on('data', (part: Buffer) => (text += part.toString()));
        res.on('end', () => {
          clearTimeout(timer);
          req.destroy();
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(text) as Record<string, unknown>,
          });
        });
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.flushHeaders();
    });
  }

  it('refuses a non-member, and a body declared larger than a file may be, before reading it', async () => {
    const outsider = await t.user('stories-outsider-2');
    // Over DOCUMENT_MAX_BYTES: had multer read it first, the answer would be 413.
    const big = new Uint8Array(600 * 1024).fill(0x61);
    const refused = await upload(outsider, big, 'big.txt');
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND' } }] });
    expect((await upload(author, big, 'big.txt')).status).toBe(413);
    // Declared, not sent: the answer comes before a byte is read, and names only the file limit.
    const declared = await declareOnly(author, 10 * 1024 * 1024);
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({
      errors: [{ extensions: { code: 'BAD_USER_INPUT', reason: 'TOO_LARGE' } }],
    });
    expect((await declareOnly(outsider, 10 * 1024 * 1024)).status).toBe(404);
    // Within the file limit, a declared size is no question about room: nothing answers it
    // until the file itself arrives.
    expect((await declareOnly(author, 390 * 1024)).status).toBe(0);
  });

  it('tells a member about their own room only: never about what another keeps privately', async () => {
    const { createLegacy } = await ok<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Room" }) { id } }',
      {},
      author,
    );
    const room = createLegacy.id;
    await joinLegacy(t, author, room, other);
    const mine: string[] = [];
    const theirs: string[] = [];
    const add = async (as: TestUser, kib: number, fill: number, into: string[]) => {
      const res = await upload(as, new Uint8Array(kib * 1024).fill(fill), 'part.txt', {}, room);
      if (res.status === 201) into.push(res.body.id as string);
      return res;
    };
    // The other member keeps 761 KB privately, and a 1,234-byte file.
    await add(other, 380, 0x61, theirs);
    await add(other, 380, 0x62, theirs);
    const small = await upload(other, new Uint8Array(1234).fill(0x63), 'small.txt', {}, room);
    expect(small.status).toBe(201);

    // The author's own 1 MB is theirs whatever the other member keeps.
    expect((await add(author, 300, 0x64, mine)).status).toBe(201);
    expect((await add(author, 380, 0x65, mine)).status).toBe(201);
    const full = await add(author, 380, 0x66, mine);
    expect(full.status).toBe(400);
    expect(full.body).toMatchObject({
      errors: [{ extensions: { code: 'BAD_USER_INPUT', reason: 'STORAGE_FULL', field: 'file' } }],
    });
    expect(JSON.stringify(full.body)).toMatch(/take 0\.7 MB of the 1 MB each member may keep/);
    // The same answer once the other member's small private file is gone.
    await ok('mutation($id: ID!) { deleteStory(id: $id) }', { id: small.body.id }, other);
    expect(await add(author, 380, 0x66, mine)).toEqual(full);

    // A story rewritten in the app counts at its new size.
    const { addStory } = await ok<{ addStory: { id: string; sizeBytes: number } }>(
      'mutation($l: ID!) { addStory(input: { legacyId: $l, title: "Notes", content: "Short." }) { id sizeBytes } }',
      { l: room },
      author,
    );
    mine.push(addStory.id);
    const rewrite = (content: string) =>
      t.gql<{ updateStory: { sizeBytes: number } }>(
        'mutation($id: ID!, $c: String!) { updateStory(input: { id: $id, content: $c }) { sizeBytes } }',
        { id: addStory.id, c: content },
        author,
      );
    const longer = await rewrite('Longer. '.repeat(50_000));
    expect(longer.errors![0].extensions).toMatchObject({ reason: 'STORAGE_FULL' });
    const [{ size }] = await ds.query<{ size: number }[]>(
      `SELECT size_bytes AS size FROM stories WHERE id = $1`,
      [addStory.id],
    );
    expect(size).toBe(6);
    expect((await rewrite('A little longer.')).data?.updateStory.sizeBytes).toBe(16);

    for (const id of mine) await ok('mutation($id: ID!) { deleteStory(id: $id) }', { id }, author);
    for (const id of theirs) await ok('mutation($id: ID!) { deleteStory(id: $id) }', { id }, other);
    await ok('mutation($l: ID!) { deleteLegacy(id: $l) }', { l: room }, author);
  });

  it('answers a malformed form field with the field named', async () => {
    const res = await upload(author, new TextEncoder().encode('A short note.'), 'note.txt', {
      visibility: 'FAMILY',
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      errors: [{ extensions: { code: 'BAD_USER_INPUT', field: 'visibility' } }],
    });
    const date = await upload(author, new TextEncoder().encode('A short note.'), 'note.txt', {
      occurredAt: 'last spring',
    });
    expect(date.body).toMatchObject({
      errors: [{ extensions: { code: 'BAD_USER_INPUT', field: 'occurredAt' } }],
    });
  });

  it('tells the family when facts from a deleted story go (factChanged), and nothing else of it', async () => {
    const { addStory } = await ok<{ addStory: { id: string } }>(
      `mutation($l: ID!) { addStory(input: { legacyId: $l, title: "Harbour days", visibility: SHARED,
         content: "Rose was born in Kinsale in 1931. Rose worked as a ferry pilot for twelve years." }) { id } }`,
      { l: legacyId },
      author,
    );
    await jobs.drain();
    const read = await ok<{ extractStory: { factsFound: number } }>(
      'mutation($id: ID!) { extractStory(id: $id, shareLikeStory: true) { factsFound } }',
      { id: addStory.id },
      author,
    );
    expect(read.extractStory.factsFound).toBeGreaterThan(0);
    const sharedFacts = (
      await ok<{ facts: { nodes: { id: string; content: string; visibility: string }[] } }>(
        'query($l: ID!) { facts(legacyId: $l, first: 100) { nodes { id content visibility } } }',
        { l: legacyId },
        other,
      )
    ).facts.nodes.filter((f) => /Kinsale|ferry pilot/.test(f.content));
    expect(sharedFacts.length).toBeGreaterThan(0);
    const events = subscribe<{ factChanged: { change: string; factId: string } }>(
      t.ws(other),
      'subscription($l: ID!) { factChanged(legacyId: $l) { change factId } }',
      { l: legacyId },
    );
    await events.ready;
    await ok('mutation($id: ID!) { deleteStory(id: $id) }', { id: addStory.id }, author);
    await events.waitFor(sharedFacts.length);
    expect(
      events.events.map((e) => e.data!.factChanged).sort((a, b) => (a.factId < b.factId ? -1 : 1)),
    ).toEqual(
      sharedFacts
        .map((f) => ({ change: 'REMOVED', factId: f.id }))
        .sort((a, b) => (a.factId < b.factId ? -1 : 1)),
    );
    const [{ n }] = await ds.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM facts WHERE id = ANY($1::uuid[])`,
      [sharedFacts.map((f) => f.id)],
    );
    expect(n).toBe(0);
  });

  it('keeps passages, vectors and facts when a story is saved with the same text', async () => {
    const { addStory } = await ok<{ addStory: { id: string } }>(
      `mutation($l: ID!) { addStory(input: { legacyId: $l, title: "Bread", content: "Rose baked soda bread on Fridays." }) { id } }`,
      { l: legacyId },
      author,
    );
    await jobs.drain();
    const chunks = () =>
      ds.query(`SELECT id FROM story_chunks WHERE story_id = $1 ORDER BY id`, [addStory.id]);
    const before = await chunks();
    const { updateStory } = await ok<{ updateStory: { status: string; title: string } }>(
      'mutation($id: ID!) { updateStory(input: { id: $id, title: "Soda bread", content: "Rose baked soda bread on Fridays." }) { status title } }',
      { id: addStory.id },
      author,
    );
    expect(updateStory).toEqual({ status: 'READY', title: 'Soda bread' });
    expect(await chunks()).toEqual(before);
  });

  it('marks a story FAILED, with the reason, when indexing fails for the last time', async () => {
    const { addStory } = await ok<{ addStory: { id: string } }>(
      `mutation($l: ID!) { addStory(input: { legacyId: $l, title: "Broken", content: "Some text." }) { id } }`,
      { l: legacyId },
      author,
    );
    // A text the chunker cannot read: every attempt fails the same way.
    await ds.query(`UPDATE stories SET pages = '[{"number": 1}]'::jsonb WHERE id = $1`, [
      addStory.id,
    ]);
    await ds.query(`UPDATE jobs SET max_attempts = 1 WHERE type = 'stories:index' AND key = $1`, [
      addStory.id,
    ]);
    const events = subscribe<{ storyChanged: { change: string; story: { status: string } } }>(
      t.ws(author),
      'subscription($l: ID!) { storyChanged(legacyId: $l) { change story { status } } }',
      { l: legacyId },
    );
    await events.ready;
    await jobs.drain();
    const { story } = await ok<{ story: { status: string; failureReason: string } }>(
      'query($id: ID!) { story(id: $id) { status failureReason } }',
      { id: addStory.id },
      author,
    );
    expect(story.status).toBe('FAILED');
    expect(story.failureReason).toMatch(/^Indexing failed: /);
    await events.waitFor(1);
    expect(events.events[0].data!.storyChanged).toEqual({
      change: 'FAILED',
      story: { status: 'FAILED' },
    });
    await ok('mutation($id: ID!) { deleteStory(id: $id) }', { id: addStory.id }, author);
  });

  it('lists a leaver their stories in leftBehindStories, theirs to delete and nothing more', async () => {
    const leaver = await t.user('stories-leaver', { email: 'leaver@stories.example.com' });
    await joinLegacy(t, author, legacyId, leaver);
    const { addStory } = await ok<{ addStory: { id: string } }>(
      `mutation($l: ID!) { addStory(input: { legacyId: $l, title: "My letters", content: "Letters I wrote to Rose." }) { id } }`,
      { l: legacyId },
      leaver,
    );
    const leftBehind = async () =>
      (
        await ok<{ leftBehindStories: { nodes: { id: string; title: string }[] } }>(
          '{ leftBehindStories(first: 10) { nodes { id title } } }',
          {},
          leaver,
        )
      ).leftBehindStories.nodes;
    expect(await leftBehind()).toEqual([]);
    await ok('mutation($l: ID!) { leaveLegacy(legacyId: $l) }', { l: legacyId }, leaver);
    expect(await leftBehind()).toEqual([{ id: addStory.id, title: 'My letters' }]);
    // Every field the schema offers on a left-behind story answers (none of its text does).
    const schema = buildSchema(readFileSync('schema.gql', 'utf8'));
    const connection = getNamedType(
      schema.getQueryType()!.getFields().leftBehindStories.type,
    ) as GraphQLObjectType;
    const node = getNamedType(connection.getFields().nodes.type) as GraphQLObjectType;
    const fields = Object.values(node.getFields())
      .map((f) => (isCompositeType(getNamedType(f.type)) ? `${f.name} { __typename }` : f.name))
      .join(' ');
    const everything = await t.gql<{ leftBehindStories: { nodes: Record<string, unknown>[] } }>(
      `{ leftBehindStories(first: 10) { nodes { ${fields} } } }`,
      {},
      leaver,
    );
    expect(everything.errors).toBeUndefined();
    expect(everything.data!.leftBehindStories.nodes).toEqual([
      expect.objectContaining({ id: addStory.id, legacyId, kind: 'STORY', sizeBytes: 24 }),
    ]);
    expect(fields).not.toMatch(/pages|downloadPath/);
    const read = await t.gql(
      'query($id: ID!) { story(id: $id) { id } }',
      { id: addStory.id },
      leaver,
    );
    expect(read.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    // Not another member's business, nor the legacy's owner's.
    const ownerView = await ok<{ leftBehindStories: { nodes: unknown[] } }>(
      '{ leftBehindStories(first: 10) { nodes { id } } }',
      {},
      author,
    );
    expect(ownerView.leftBehindStories.nodes).toEqual([]);
    await ok('mutation($id: ID!) { deleteStory(id: $id) }', { id: addStory.id }, leaver);
    expect(await leftBehind()).toEqual([]);
  });
});
