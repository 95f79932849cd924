import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ArchivesService } from '../../src/archives/archives.service.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { StoriesService } from '../../src/stories/stories.service.js';
import {
  ARCHIVE_FIELDS,
  ArchiveView,
  exportArchive,
  importArchive,
  jsonLines,
  unzipAll,
  uploadArchive,
} from '../support/archives.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * Export on one Keepsake, import on a fresh one: the same legacy, facts, stories (their files
 * byte for byte), conversations turn by turn, memories and period summaries, and the same
 * answers to recall; an import cut short goes on where it stopped and yields one whole legacy.
 */
const QUESTIONS = [
  'what did he grow in the greenhouse?',
  'the lighthouse at the coast',
  'the recipe in the tin box',
  'where did he keep his letters?',
];

interface Content {
  legacy: Record<string, unknown>;
  facts: string[];
  stories: { title: string; pages: string[]; file: string }[];
  conversations: { title: string | null; turns: string[] }[];
  memories: string[];
  periods: string[];
}

/** What an archive holds, without the ids that differ from one Keepsake to another. */
function contentOf(files: Map<string, Buffer>): Content {
  const manifest = JSON.parse(files.get('keepsake.json')!.toString('utf8'));
  const turns = jsonLines<{
    conversationId: string;
    turnIndex: number;
    role: string;
    content: string;
    occurredAt: string;
  }>(files, 'data/turns.jsonl');
  return {
    legacy: { ...manifest.legacy, id: undefined, createdAt: undefined },
    facts: jsonLines<{ content: string; status: string }>(files, 'data/facts.jsonl')
      .filter((f) => f.status === 'ACTIVE')
      .map((f) => f.content)
      .sort(),
    stories: jsonLines<{ title: string; pages: { text: string }[]; file: string }>(
      files,
      'data/stories.jsonl',
    )
      .map((s) => ({
        title: s.title,
        pages: s.pages.map((p) => p.text),
        file: files.get(s.file)!.toString('base64'),
      }))
      .sort((a, b) => a.title.localeCompare(b.title)),
    conversations: jsonLines<{ id: string; title: string | null }>(
      files,
      'data/conversations.jsonl',
    )
      .map((c) => ({
        title: c.title,
        turns: turns
          .filter((t) => t.conversationId === c.id)
          .sort((a, b) => a.turnIndex - b.turnIndex)
          .map((t) => `${t.turnIndex} ${t.role} ${t.occurredAt} ${t.content}`),
      }))
      .sort((a, b) => String(a.title).localeCompare(String(b.title))),
    memories: jsonLines<{ content: string }>(files, 'data/memories.jsonl')
      .map((m) => m.content)
      .sort(),
    periods: jsonLines<{ summary: string }>(files, 'data/period-summaries.jsonl')
      .map((p) => p.summary)
      .sort(),
  };
}

describe('legacy archives: round trip to a fresh Keepsake', () => {
  let a: TestApp;
  let b: TestApp;
  let owner: TestUser;
  let importer: TestUser;
  let legacyId: string;
  let zip: Buffer;

  const ok = async <T>(
    t: TestApp,
    query: string,
    variables: Record<string, unknown>,
    as: TestUser,
  ) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };

  const recall = async (t: TestApp, as: TestUser, legacy: string, query: string) =>
    (
      await ok<{ recall: { edges: { node: { sourceType: string; text: string } }[] } }>(
        t,
        'query($l: ID!, $q: String!) { recall(legacyId: $l, query: $q, first: 5) { edges { node { sourceType text } } } }',
        { l: legacy, q: query },
        as,
      )
    ).recall.edges.map(({ node: r }) => `${r.sourceType}: ${r.text}`);

  beforeAll(async () => {
    const env = { AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' };
    a = await startTestApp(env);
    b = await startTestApp(env);
    owner = await a.user('round-trip-owner', {
      email: 'owner@round-trip.example.com',
      name: 'Ruth',
    });
    importer = await b.user('round-trip-importer', {
      email: 'heir@round-trip.example.com',
      name: 'Sam',
    });
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        a,
        'mutation { createLegacy(input: { name: "Grandpa Joe", bornOn: "1930-04-02", description: "He grew tomatoes." }) { id } }',
        {},
        owner,
      )
    ).createLegacy.id;
    for (const [content, visibility] of [
      ['Joe kept a greenhouse behind the house.', 'SHARED'],
      ['Joe worked at the lighthouse on the coast for thirty years.', 'PRIVATE'],
    ]) {
      await ok(
        a,
        `mutation($l: ID!, $c: String!, $v: FactVisibility!) { addFact(input: { legacyId: $l, content: $c, category: OCCUPATION, visibility: $v }) { id } }`,
        { l: legacyId, c: content, v: visibility },
        owner,
      );
    }
    await ok(
      a,
      `mutation($l: ID!) { addStory(input: { legacyId: $l, title: "The tin box", content: "# The tin box\\n\\nThe recipe for plum cake is still in her tin box, in his handwriting." }) { id } }`,
      { l: legacyId },
      owner,
    );
    const form = new FormData();
    form.append(
      'file',
      new Blob(['He kept his letters in the attic, in a shoebox under the eaves.\n']),
      'letters.txt',
    );
    const uploaded = await fetch(new URL(`/legacies/${legacyId}/documents`, a.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    await ok(
      a,
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { conversation { id } } }`,
      {
        input: {
          legacyId,
          title: 'Summers',
          messages: [
            {
              role: 'USER',
              occurredAt: '2025-06-02T17:00:00Z',
              content: 'He grew tomatoes and beans in the greenhouse every summer.',
            },
            {
              role: 'ASSISTANT',
              occurredAt: '2025-06-02T17:00:05Z',
              content: 'That sounds like a lovely greenhouse.',
            },
            {
              role: 'USER',
              occurredAt: '2025-06-03T17:00:00Z',
              content: 'On Sundays he walked to the lighthouse with me.',
            },
          ],
        },
      },
      owner,
    );
    const started = await ok<{ startConversation: { id: string } }>(
      a,
      `mutation($l: ID!) { startConversation(input: { legacyId: $l, title: "Today" }) { id } }`,
      { l: legacyId },
      owner,
    );
    await ok(
      a,
      `mutation($c: ID!) { sendMessage(input: { conversationId: $c, content: "I found his fishing hat in the shed." }) { message { id } } }`,
      { c: started.startConversation.id },
      owner,
    );
    await ok(
      a,
      `mutation($l: ID!) { rememberThis(input: { legacyId: $l, content: "My grandfather taught me to grow tomatoes." }) { memory { id } } }`,
      { l: legacyId },
      owner,
    );
    await a.app.get(JobsService).drain();
    await ok(
      a,
      `mutation($l: ID!) { summarizePeriod(input: { legacyId: $l, period: WEEK, start: "2025-06-02" }) { outcome } }`,
      { l: legacyId },
      owner,
    );
    await a.app.get(JobsService).drain();
    zip = (await exportArchive(a, owner, legacyId)).zip;
  }, 300_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  let imported: ArchiveView;

  it('brings the archive back as a new legacy the importer owns, with the same content', async () => {
    imported = await importArchive(b, importer, zip);
    expect(imported).toMatchObject({ kind: 'IMPORT', status: 'COMPLETED', progress: 1 });
    const legacy = await ok<{
      legacy: { name: string; description: string; bornOn: string; viewerRole: string };
    }>(
      b,
      'query($l: ID!) { legacy(id: $l) { name description bornOn viewerRole } }',
      { l: imported.legacyId },
      importer,
    );
    expect(legacy.legacy).toEqual({
      name: 'Grandpa Joe',
      description: 'He grew tomatoes.',
      bornOn: '1930-04-02',
      viewerRole: 'OWNER',
    });
    const again = (await exportArchive(b, importer, imported.legacyId!)).zip;
    const before = contentOf(await unzipAll(zip));
    const after = contentOf(await unzipAll(again));
    expect(after).toEqual(before);
    expect(before.facts).toHaveLength(2);
    expect(before.stories).toHaveLength(2);
    expect(before.conversations.map((c) => c.turns.length).sort()).toEqual([1, 3]);
    expect(before.memories).toHaveLength(1);
    expect(before.periods).toHaveLength(1);
  });

  it('answers recall the same on both', async () => {
    for (const question of QUESTIONS) {
      const there = await recall(a, owner, legacyId, question);
      const here = await recall(b, importer, imported.legacyId!, question);
      expect({ question, answers: here }).toEqual({ question, answers: there });
      expect(there.length).toBeGreaterThan(0);
    }
  });

  it('goes on where an import cut short stopped: one legacy, each item once', async () => {
    const uploaded = await uploadArchive(b, importer, zip);
    expect(uploaded.status).toBe(201);
    const id = uploaded.body.id as string;
    const res = await b.gql<{ importLegacyArchive: ArchiveView }>(
      `mutation($id: ID!) { importLegacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`,
      { id },
      importer,
    );
    expect(res.errors).toBeUndefined();
    const ds = b.app.get(DataSource);
    const legaciesOf = async () =>
      (
        await ds.query(
          `SELECT count(*)::int AS n FROM legacy_members m JOIN users u ON u.id = m.user_id
            WHERE u.email = $1`,
          [importer.email],
        )
      )[0].n as number;
    const legaciesBefore = await legaciesOf();
    const stories = b.app.get(StoriesService);
    const store = stories.storeArchived.bind(stories);
    let calls = 0;
    const spy = jest.spyOn(stories, 'storeArchived').mockImplementation(async (...args) => {
      // The second story's transaction dies: the first story, and everything before, committed.
      if (++calls === 2) throw new Error('killed');
      return store(...args);
    });
    const archives = b.app.get(ArchivesService);
    await expect(archives.runImport(id)).rejects.toThrow('killed');
    spy.mockRestore();
    const [half] = await ds.query('SELECT legacy_id, cursor FROM legacy_archives WHERE id = $1', [
      id,
    ]);
    expect(half.cursor).toEqual({ part: 'stories', line: 1 });
    await archives.runImport(id);
    await b.app.get(JobsService).drain({ timeoutMs: 300_000 });
    const count = async () =>
      (
        await ds.query(
          `SELECT (SELECT count(*)::int FROM stories WHERE legacy_id = $1) AS stories,
                  (SELECT count(*)::int FROM facts WHERE legacy_id = $1) AS facts,
                  (SELECT count(*)::int FROM messages WHERE legacy_id = $1) AS turns,
                  (SELECT count(*)::int FROM conversations WHERE legacy_id = $1) AS conversations,
                  (SELECT count(*)::int FROM memories WHERE legacy_id = $1) AS memories,
                  (SELECT count(*)::int FROM period_summaries WHERE legacy_id = $1) AS periods`,
          [half.legacy_id],
        )
      )[0];
    const whole = await count();
    expect(whole).toEqual({
      stories: 2,
      facts: 2,
      turns: 4,
      conversations: 2,
      memories: 1,
      periods: 1,
    });
    expect(await legaciesOf()).toBe(legaciesBefore + 1);
    // Run once more: nothing changes.
    await archives.runImport(id);
    expect(await count()).toEqual(whole);
    expect(await legaciesOf()).toBe(legaciesBefore + 1);
    const again = (await exportArchive(b, importer, half.legacy_id)).zip;
    expect(contentOf(await unzipAll(again))).toEqual(contentOf(await unzipAll(zip)));
  });
});
