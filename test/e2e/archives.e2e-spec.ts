import { JobsService } from '../../src/jobs/jobs.service.js';
import { ArchivesService } from '../../src/archives/archives.service.js';
import { DataSource } from 'typeorm';
import { joinLegacy } from '../support/membership.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  ARCHIVE_FIELDS,
  ArchiveView,
  exportArchive,
  jsonLines,
  unzipAll,
} from '../support/archives.js';

/**
 * A legacy archive holds exactly what its member may see: two members, every kind of item
 * private and shared (facts, stories with files, conversations alone and together, a reply made
 * for one participant alone, memories, period summaries, profiles), each marked with a word of
 * its own. Each member's archive is searched, every file of it (index.html, the pages,
 * keepsake.json, the data and the original files), for every other member's private word.
 */
type Who = 'olivia' | 'max';

/** A word per item, found nowhere else. */
const WORD = {
  olivia: {
    privateFact: 'quincemarmalade',
    sharedFact: 'lighthousekeeper',
    privateStory: 'velvetattic',
    sharedStory: 'orchardladder',
    sharedDocument: 'tidetable',
    conversation: 'saffronkite',
    aloneReply: 'moonlitferry',
    memory: 'copperkettle',
    period: 'juniperlantern',
    profile: 'zeppelinhobby',
  },
  max: {
    privateFact: 'walnutbarge',
    sharedFact: 'harborbells',
    privateStory: 'thistlecompass',
    sharedStory: 'meadowclock',
    sharedDocument: 'ferrylog',
    conversation: 'amberglider',
    aloneReply: 'cobaltbarn',
    memory: 'pewterspoon',
    period: 'marigoldsail',
    profile: 'origamiharp',
  },
};
/** Seen by the other member: the shared items, and the together conversation's turns. */
const SHARED: (keyof typeof WORD.olivia)[] = ['sharedFact', 'sharedStory', 'sharedDocument'];
const TOGETHER_WORD = 'brasscarousel';

describe('legacy archives: what a member may see, and nothing else', () => {
  let t: TestApp;
  let jobs: JobsService;
  const users = {} as Record<Who, TestUser>;
  let legacyId: string;
  let base: string;

  const ok = async <T>(query: string, variables: Record<string, unknown>, as: TestUser) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };

  async function itemsOf(who: Who) {
    const as = users[who];
    const w = WORD[who];
    const fact = (content: string, visibility: string) =>
      ok(
        `mutation($l: ID!, $c: String!, $v: FactVisibility!) {
           addFact(input: { legacyId: $l, content: $c, category: HOBBY, visibility: $v }) { id } }`,
        { l: legacyId, c: content, v: visibility },
        as,
      );
    await fact(`He loved ${w.privateFact} on toast.`, 'PRIVATE');
    await fact(`He once worked as a ${w.sharedFact} near the coast.`, 'SHARED');
    const story = (title: string, content: string, visibility: string) =>
      ok(
        `mutation($l: ID!, $t: String!, $c: String!, $v: StoryVisibility!) {
           addStory(input: { legacyId: $l, title: $t, content: $c, visibility: $v }) { id } }`,
        { l: legacyId, t: title, c: content, v: visibility },
        as,
      );
    await story(
      `The ${w.privateStory} story`,
      `Up in the ${w.privateStory} he hid letters.`,
      'PRIVATE',
    );
    await story(
      `The ${w.sharedStory} story`,
      `By the ${w.sharedStory} we picked apples.`,
      'SHARED',
    );
    const form = new FormData();
    form.append(
      'file',
      new Blob([`Notes about the ${w.sharedDocument} he kept.`]),
      `${w.sharedDocument}.txt`,
    );
    form.append('visibility', 'SHARED');
    const uploaded = await fetch(`${base}/legacies/${legacyId}/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${as.token}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    // Their own conversation, with a reply made for them alone.
    const started = await ok<{ startConversation: { id: string } }>(
      `mutation($l: ID!) { startConversation(input: { legacyId: $l, title: "Mine" }) { id } }`,
      { l: legacyId },
      as,
    );
    await ok(
      `mutation($c: ID!, $m: String!) { sendMessage(input: { conversationId: $c, content: $m }) { message { id } } }`,
      { c: started.startConversation.id, m: `We talked about the ${w.conversation} he flew.` },
      as,
    );
    await ok(
      `mutation($c: ID!, $m: String!) { recordAssistantMessage(input: { conversationId: $c, content: $m }) { id } }`,
      { c: started.startConversation.id, m: `I remember the ${w.aloneReply} you mentioned.` },
      as,
    );
    await ok(
      `mutation($l: ID!, $c: String!) { rememberThis(input: { legacyId: $l, content: $c }) { memory { id } } }`,
      { l: legacyId, c: `I keep his ${w.memory} on my shelf.` },
      as,
    );
    // A past week to look back on.
    await ok(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { conversation { id } } }`,
      {
        input: {
          legacyId,
          title: 'Old letters',
          messages: [
            {
              role: 'USER',
              occurredAt: '2025-10-07T18:00:00Z',
              content: `The ${w.period} was lit every night.`,
            },
            {
              role: 'USER',
              occurredAt: '2025-10-08T18:00:00Z',
              content: `We carried the ${w.period} to the pier.`,
            },
          ],
        },
      },
      as,
    );
    await jobs.drain();
    await ok(
      `mutation($l: ID!) { summarizePeriod(input: { legacyId: $l, period: WEEK, start: "2025-10-06" }) { outcome } }`,
      { l: legacyId },
      as,
    );
    await ok(
      `mutation($n: String!) { updateProfile(input: { notes: $n, interests: [$n] }) { notes } }`,
      { n: `I collect ${w.profile} things.` },
      as,
    );
    await ok('mutation { setProfileConsent(consent: true) { consent } }', {}, as);
  }

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    jobs = t.app.get(JobsService);
    base = t.url.replace(/\/graphql$/, '');
    users.olivia = await t.user('archive-olivia', {
      email: 'olivia@archives.example.com',
      name: 'Olivia',
    });
    users.max = await t.user('archive-max', { email: 'max@archives.example.com', name: 'Max' });
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandpa Joe", description: "He fixed every bicycle in the village." }) { id } }',
        {},
        users.olivia,
      )
    ).createLegacy.id;
    await joinLegacy(t, users.olivia, legacyId, users.max);
    await itemsOf('olivia');
    await itemsOf('max');
    // Olivia's reply made for her alone, then Max brought in: he reads it withheld.
    const together = await ok<{ startConversation: { id: string } }>(
      `mutation($l: ID!) { startConversation(input: { legacyId: $l, title: "Together" }) { id } }`,
      { l: legacyId },
      users.olivia,
    );
    const c = together.startConversation.id;
    await ok(
      `mutation($c: ID!) { recordAssistantMessage(input: { conversationId: $c, content: "Only for Olivia: the ${WORD.olivia.aloneReply}x." }) { id } }`,
      { c },
      users.olivia,
    );
    const me = await ok<{ me: { id: string } }>('{ me { id } }', {}, users.max);
    await ok(
      `mutation($c: ID!, $u: ID!) { addConversationParticipant(input: { conversationId: $c, userId: $u }) { id } }`,
      { c, u: me.me.id },
      users.olivia,
    );
    await ok(
      `mutation($c: ID!) { sendMessage(input: { conversationId: $c, content: "Max: the ${TOGETHER_WORD} at the fair." }) { message { id } } }`,
      { c },
      users.max,
    );
    await jobs.drain();
  }, 300_000);
  afterAll(() => t?.close());

  /** Every file of the archive as text (binary files included, as their bytes read). */
  const everything = (files: Map<string, Buffer>) =>
    [...files.entries()].map(([name, bytes]) => `${name}\n${bytes.toString('utf8')}`).join('\n');

  for (const who of ['olivia', 'max'] as const) {
    const other: Who = who === 'olivia' ? 'max' : 'olivia';

    it(`${who}'s archive holds all they may see and nothing private of ${other}'s`, async () => {
      const { archive, zip } = await exportArchive(t, users[who], legacyId);
      const files = await unzipAll(zip);
      const text = everything(files);
      for (const [item, word] of Object.entries(WORD[who])) {
        if (item === 'profile') continue;
        expect({ item, found: text.includes(word) }).toEqual({ item, found: true });
      }
      for (const [item, word] of Object.entries(WORD[other])) {
        const visible = SHARED.includes(item as keyof typeof WORD.olivia);
        expect({ item, found: text.includes(word) }).toEqual({ item, found: visible });
      }
      // Nobody's profile, not even one's own.
      expect(text).not.toContain(WORD[who].profile);
      // The together conversation: Max's turn for both; Olivia's reply alone for her only.
      expect(text).toContain(TOGETHER_WORD);
      expect(text.includes(`${WORD.olivia.aloneReply}x`)).toBe(who === 'olivia');

      const manifest = JSON.parse(files.get('keepsake.json')!.toString('utf8'));
      expect(manifest).toMatchObject({
        format: 'keepsake.legacy-archive',
        version: 1,
        legacy: {
          id: legacyId,
          name: 'Grandpa Joe',
          description: 'He fixed every bicycle in the village.',
        },
      });
      const facts = jsonLines(files, 'data/facts.jsonl');
      const stories = jsonLines<{ file: string; pages: { text: string }[] }>(
        files,
        'data/stories.jsonl',
      );
      const turns = jsonLines<{ withheld: boolean; turnIndex: number }>(files, 'data/turns.jsonl');
      expect(manifest.parts.facts.count).toBe(facts.length);
      expect(facts).toHaveLength(3);
      expect(stories).toHaveLength(5);
      for (const s of stories) expect(files.has(s.file)).toBe(true);
      expect(jsonLines(files, 'data/memories.jsonl')).toHaveLength(1);
      expect(jsonLines(files, 'data/period-summaries.jsonl')).toHaveLength(1);
      expect(turns.filter((x) => x.withheld)).toHaveLength(who === 'max' ? 1 : 0);
      expect(archive.counts).toMatchObject({
        facts: 3,
        stories: 5,
        memories: 1,
        periodSummaries: 1,
      });
      // The people named: display names only.
      expect(manifest.people.map((p: { displayName: string }) => p.displayName).sort()).toEqual([
        'Max',
        'Olivia',
      ]);
      expect(text).not.toContain('@archives.example.com');

      // index.html links every story's original and every conversation's page.
      const index = files.get('index.html')!.toString('utf8');
      expect(index).toContain('Grandpa Joe');
      expect(index).not.toMatch(/<script/i);
      const href = (path: string) => path.split('/').map(encodeURIComponent).join('/');
      for (const s of stories) expect(index).toContain(`href="${href(s.file)}"`);
      for (const c of jsonLines<{ page: string }>(files, 'data/conversations.jsonl')) {
        expect(index).toContain(`href="${href(c.page)}"`);
        expect(files.has(c.page)).toBe(true);
      }
    });
  }

  it('escapes what members wrote in its pages', async () => {
    await ok(
      `mutation($l: ID!) { addFact(input: { legacyId: $l, content: "He wrote <script>alert(1)</script> & left.", category: OTHER }) { id } }`,
      { l: legacyId },
      users.max,
    );
    const { zip } = await exportArchive(t, users.max, legacyId);
    const index = (await unzipAll(zip)).get('index.html')!.toString('utf8');
    expect(index).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; left.');
    expect(index).not.toMatch(/<script/i);
  });

  it('runs an export job twice to the same end, and answers an export on its way', async () => {
    const ask = () =>
      ok<{ exportLegacyArchive: ArchiveView }>(
        `mutation($l: ID!) { exportLegacyArchive(legacyId: $l) { ${ARCHIVE_FIELDS} } }`,
        { l: legacyId },
        users.olivia,
      );
    const first = (await ask()).exportLegacyArchive;
    expect(first.status).toBe('QUEUED');
    expect((await ask()).exportLegacyArchive.id).toBe(first.id);
    const archives = t.app.get(ArchivesService);
    await archives.runExport(first.id);
    const ds = t.app.get(DataSource);
    const once = await ds.query(
      'SELECT status, size_bytes, updated_at FROM legacy_archives WHERE id = $1',
      [first.id],
    );
    await archives.runExport(first.id);
    const twice = await ds.query(
      'SELECT status, size_bytes, updated_at FROM legacy_archives WHERE id = $1',
      [first.id],
    );
    expect(once[0].status).toBe('COMPLETED');
    expect(twice).toEqual(once);
    await jobs.drain();
  });
});
