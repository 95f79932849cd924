import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ContextAssemblerService } from '../../src/context/context-assembler.service.js';
import { ConversationEntity } from '../../src/conversations/conversation.entity.js';
import { MessageEntity } from '../../src/conversations/message.entity.js';
import { UserEntity } from '../../src/identity/user.entity.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { LegacyEntity } from '../../src/legacies/legacy.entity.js';
import { MemoryClock } from '../../src/memories/memory-clock.js';
import {
  EXTRACT_JOB,
  MemoryExtractionService,
} from '../../src/memories/memory-extraction.service.js';
import { PURGE_TASK, RETENTION_TASK } from '../../src/memories/memory-maintenance.service.js';
import { LANGUAGE_MODEL, LanguageModel } from '../../src/llm/language-model.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';
import {
  addMember,
  codeOf,
  createLegacy,
  DAY_MS,
  exchange,
  listMemories,
  MEMORY_FIELDS,
  MemoryView,
  ok,
  rememberThis,
  rowsOf,
  setNow,
  signIn,
  startConversation,
  vectorCount,
} from './memories-fixtures.js';

/**
 * Memories on the embedded database with the offline heuristic model: consent, extraction and
 * its idempotency, duplicates and contradictions, the cap, retention and purge with a moved
 * clock, the memory block of the agent's context, stats, export and import.
 * AGENT_REPLY=off: the client records the assistant turns, so each exchange is exact.
 */
describe('Memories', () => {
  let t: TestApp;
  let ds: DataSource;
  let jobs: JobsService;
  let clock: MemoryClock;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      MEMORY_MAX_ACTIVE: '8',
      // The memory block's index path, which bigger users take (the e2e suites take the other).
      MEMORY_CONTEXT_SCORE_ALL: '0',
    });
    ds = t.app.get(DataSource);
    jobs = t.app.get(JobsService);
    clock = t.app.get(MemoryClock);
  });
  afterAll(() => t.close());
  afterEach(() => setNow(clock));

  const extractJobs = async (key: string) =>
    (await ds.query(`SELECT status, attempts FROM jobs WHERE type = $1 AND key = $2`, [
      EXTRACT_JOB,
      key,
    ])) as { status: string; attempts: number }[];

  const ledger = async (sourceMessageId: string) =>
    (
      await ds.query(
        `SELECT outcome, proposed_count, below_threshold_count, created_count, merged_count,
                superseded_count, completed_at IS NOT NULL AS done
           FROM memory_extractions WHERE source_message_id = $1`,
        [sourceMessageId],
      )
    )[0] as Record<string, unknown> | undefined;

  describe('consent', () => {
    let alice: TestUser & { id: string };
    let bob: TestUser & { id: string };
    let legacyId: string;

    beforeAll(async () => {
      alice = await signIn(t, 'consent-alice');
      bob = await signIn(t, 'consent-bob');
      legacyId = await createLegacy(t, alice);
      await addMember(t, alice, legacyId, bob);
    });

    it('is opt-in: a new user starts with rememberByDefault off, so nothing is remembered', async () => {
      const me = ok(
        await t.gql<{ me: { rememberByDefault: boolean; memoryPaused: boolean } }>(
          '{ me { rememberByDefault memoryPaused longTermMemory } }',
          {},
          alice,
        ),
      );
      expect(me.me).toEqual({
        rememberByDefault: false,
        memoryPaused: false,
        longTermMemory: false,
      });
      const conversationId = await startConversation(t, alice, legacyId);
      const { userMessageId } = await exchange(t, alice, conversationId, 'I live in Porto.');
      await jobs.drain();
      expect(await extractJobs(userMessageId)).toEqual([]);
      expect(await rowsOf(ds, alice.id)).toEqual([]);
    });

    it('creates nothing while memory is paused, even where remember is on', async () => {
      ok(await t.gql('mutation { updateMe(input: { memoryPaused: true }) { id } }', {}, alice));
      const conversationId = await startConversation(t, alice, legacyId, true);
      const { userMessageId } = await exchange(t, alice, conversationId, 'I live in Porto.');
      await jobs.drain();
      expect(await extractJobs(userMessageId)).toEqual([]);
      expect(await rowsOf(ds, alice.id)).toEqual([]);
      ok(await t.gql('mutation { updateMe(input: { memoryPaused: false }) { id } }', {}, alice));
    });

    it('remembers from the user turn of a remember-on conversation, with its source', async () => {
      ok(
        await t.gql('mutation { updateMe(input: { rememberByDefault: true }) { id } }', {}, alice),
      );
      const conversationId = await startConversation(t, alice, legacyId);
      const { userMessageId } = await exchange(t, alice, conversationId, 'I live in Porto.');
      await jobs.drain();
      expect(await extractJobs(userMessageId)).toEqual([{ status: 'SUCCEEDED', attempts: 1 }]);
      const [memory] = await listMemories(t, alice);
      expect(memory).toMatchObject({
        type: 'FACT',
        content: 'I live in Porto.',
        confidence: 0.74,
        source: 'CHAT',
        legacyId,
        conversationId,
        sourceMessageId: userMessageId,
        sourceTurnIndex: 0,
        conversationMode: 'CLIENT',
        referenceCount: 0,
        status: 'ACTIVE',
        history: [expect.objectContaining({ action: 'CREATED' })],
      });
      expect(await ledger(userMessageId)).toMatchObject({
        outcome: 'EXTRACTED',
        created_count: 1,
        done: true,
      });
      const detail = ok(
        await t.gql<{ memory: { sourceMessage: { id: string; content: string } } }>(
          'query($id: ID!) { memory(id: $id) { sourceMessage { id content } } }',
          { id: memory.id },
          alice,
        ),
      );
      expect(detail.memory.sourceMessage).toEqual({
        id: userMessageId,
        content: 'I live in Porto.',
      });
    });

    it('never takes a memory from what the assistant said', async () => {
      const conversationId = await startConversation(t, alice, legacyId, true);
      const before = (await rowsOf(ds, alice.id)).length;
      const { userMessageId } = await exchange(
        t,
        alice,
        conversationId,
        'Thanks, that helps.',
        'I live in Lisbon and I love jazz. My sister Anna is a pilot.',
      );
      await jobs.drain();
      expect(await ledger(userMessageId)).toMatchObject({
        outcome: 'EXTRACTED',
        proposed_count: 0,
      });
      expect(await rowsOf(ds, alice.id)).toHaveLength(before);
    });

    it("keeps each member's memories to that member", async () => {
      const conversationId = await startConversation(t, bob, legacyId, true);
      const { userMessageId, assistantMessageId } = await exchange(
        t,
        bob,
        conversationId,
        'I work as a carpenter.',
      );
      await jobs.drain();
      const bobs = await rowsOf(ds, bob.id);
      expect(bobs.map((r) => r.content)).toEqual(['I work as a carpenter.']);
      expect((await listMemories(t, alice)).map((m) => m.content)).not.toContain(
        'I work as a carpenter.',
      );
      // A turn is only ever paired with a reply in its own conversation.
      const aliceTurn = (await rowsOf(ds, alice.id))[0];
      const extraction = t.app.get(MemoryExtractionService);
      const [aliceSource] = await ds.query(`SELECT source_message_id FROM memories WHERE id = $1`, [
        aliceTurn.id,
      ]);
      expect(
        await extraction.run({
          userMessageId: aliceSource.source_message_id,
          assistantMessageId,
        }),
      ).toBe('gone');
      expect(await ledger(userMessageId)).toMatchObject({ created_count: 1 });
    });

    it('stops at once when remember is switched off or memory paused, and deletes nothing', async () => {
      const conversationId = await startConversation(t, alice, legacyId, true);
      const before = await rowsOf(ds, alice.id);
      const first = await exchange(t, alice, conversationId, 'I work as a nurse.');
      ok(
        await t.gql(
          'mutation($id: ID!) { setConversationRemember(conversationId: $id, on: false) { remember } }',
          { id: conversationId },
          alice,
        ),
      );
      await jobs.drain();
      expect(await ledger(first.userMessageId)).toMatchObject({ outcome: 'NO_CONSENT' });
      expect(await rowsOf(ds, alice.id)).toEqual(before);

      ok(
        await t.gql(
          'mutation($id: ID!) { setConversationRemember(conversationId: $id, on: true) { remember } }',
          { id: conversationId },
          alice,
        ),
      );
      const second = await exchange(t, alice, conversationId, 'My favourite colour is green.');
      ok(await t.gql('mutation { updateMe(input: { memoryPaused: true }) { id } }', {}, alice));
      await jobs.drain();
      expect(await ledger(second.userMessageId)).toMatchObject({ outcome: 'NO_CONSENT' });
      ok(await t.gql('mutation { updateMe(input: { memoryPaused: false }) { id } }', {}, alice));
      // The decision is final for those turns: running their jobs again stores nothing.
      await jobs.runHandler(EXTRACT_JOB, { ...first });
      await jobs.runHandler(EXTRACT_JOB, { ...second });
      expect(await rowsOf(ds, alice.id)).toEqual(before);
    });

    it('checks consent again when saving: a switch-off during the model call stores nothing', async () => {
      const conversationId = await startConversation(t, alice, legacyId, true);
      const before = await rowsOf(ds, alice.id);
      const ex = await exchange(
        t,
        alice,
        conversationId,
        'My sister Anna and I walk by the river every Sunday.',
      );
      const llm = t.app.get<LanguageModel>(LANGUAGE_MODEL);
      const original = llm.extractMemories.bind(llm);
      const spy = jest.spyOn(llm, 'extractMemories').mockImplementation(async (input) => {
        const out = await original(input);
        ok(
          await t.gql(
            'mutation($id: ID!) { setConversationRemember(conversationId: $id, on: false) { remember } }',
            { id: conversationId },
            alice,
          ),
        );
        return out;
      });
      try {
        expect(await t.app.get(MemoryExtractionService).run(ex)).toBe('no-consent');
        expect(spy).toHaveBeenCalledTimes(1);
      } finally {
        spy.mockRestore();
      }
      expect(await ledger(ex.userMessageId)).toMatchObject({
        outcome: 'NO_CONSENT',
        created_count: 0,
        done: true,
      });
      // Something would have been saved: proposed above the threshold.
      const row = (await ledger(ex.userMessageId))!;
      expect(Number(row.proposed_count) - Number(row.below_threshold_count)).toBeGreaterThan(0);
      expect(await rowsOf(ds, alice.id)).toEqual(before);
      // Final for that turn, even once remember is on again.
      ok(
        await t.gql(
          'mutation($id: ID!) { setConversationRemember(conversationId: $id, on: true) { remember } }',
          { id: conversationId },
          alice,
        ),
      );
      expect(await t.app.get(MemoryExtractionService).run(ex)).toBe('already-done');
      expect(await rowsOf(ds, alice.id)).toEqual(before);
    });
  });

  describe('extraction', () => {
    let user: TestUser & { id: string };
    let legacyId: string;
    let conversationId: string;

    beforeAll(async () => {
      user = await signIn(t, 'extract-user');
      legacyId = await createLegacy(t, user);
      conversationId = await startConversation(t, user, legacyId, true);
    });

    it('is idempotent per source message: running the job twice changes nothing', async () => {
      const ex = await exchange(
        t,
        user,
        conversationId,
        'My sister Anna and I walk by the river every Sunday.',
      );
      await jobs.drain();
      const rows = await ds.query(`SELECT * FROM memories WHERE user_id = $1 ORDER BY id`, [
        user.id,
      ]);
      expect(rows.length).toBe(2);
      const before = await ledger(ex.userMessageId);
      await jobs.runHandler(EXTRACT_JOB, { ...ex });
      await jobs.runHandler(EXTRACT_JOB, { ...ex });
      expect(
        await ds.query(`SELECT * FROM memories WHERE user_id = $1 ORDER BY id`, [user.id]),
      ).toEqual(rows);
      expect(await ledger(ex.userMessageId)).toEqual(before);
    });

    it('saves nothing below the confidence threshold, nor medical or financial claims', async () => {
      const hedged = await exchange(
        t,
        user,
        conversationId,
        'I think maybe I want to learn the piano.',
      );
      const medical = await exchange(t, user, conversationId, 'I take insulin every morning.');
      const before = (await rowsOf(ds, user.id)).length;
      await jobs.drain();
      expect(await rowsOf(ds, user.id)).toHaveLength(before);
      expect(await ledger(hedged.userMessageId)).toMatchObject({
        proposed_count: 1,
        below_threshold_count: 1,
        created_count: 0,
      });
      expect(await ledger(medical.userMessageId)).toMatchObject({ created_count: 0 });
    });

    it('raises the reference count of a restatement instead of adding a row', async () => {
      const other = await startConversation(t, user, legacyId, true);
      const first = await exchange(t, user, conversationId, 'I love jazz music.');
      await jobs.drain();
      const again = await exchange(t, user, other, 'I LOVE jazz music!');
      await jobs.drain();
      const jazz = (await rowsOf(ds, user.id)).filter((r) => /jazz/i.test(r.content));
      expect(jazz).toHaveLength(1);
      expect(jazz[0]).toMatchObject({ content: 'I love jazz music.', reference_count: 1 });
      expect(await ledger(first.userMessageId)).toMatchObject({ created_count: 1 });
      expect(await ledger(again.userMessageId)).toMatchObject({
        created_count: 0,
        merged_count: 1,
      });
    });

    it('merges by meaning at or above the cosine threshold, and keeps different goals apart', async () => {
      await exchange(t, user, conversationId, 'I want to run a marathon next year.');
      await jobs.drain();
      await exchange(t, user, conversationId, 'My goal is to run a marathon next year.');
      await exchange(t, user, conversationId, 'I want to learn to paint watercolours.');
      await jobs.drain();
      const goals = (await rowsOf(ds, user.id)).filter((r) => r.type === 'GOAL');
      expect(goals.map((g) => [g.content, g.reference_count])).toEqual([
        ['I want to run a marathon next year.', 1],
        ['I want to learn to paint watercolours.', 0],
      ]);
    });

    it('supersedes a contradicted memory, keeping it archived with its history', async () => {
      await exchange(t, user, conversationId, 'I live in Porto.');
      await jobs.drain();
      await exchange(t, user, conversationId, 'I live in Lisbon now.');
      await jobs.drain();
      const all = await listMemories(t, user, { search: 'live' });
      const porto = all.find((m) => m.content === 'I live in Porto.')!;
      const lisbon = all.find((m) => m.content === 'I live in Lisbon now.')!;
      expect(lisbon).toMatchObject({ status: 'ACTIVE', supersededBy: null, validTo: null });
      expect(lisbon.history[0].details).toEqual(
        expect.objectContaining({ supersedes: [porto.id] }),
      );
      expect(porto).toMatchObject({
        status: 'ARCHIVED',
        archiveReason: 'SUPERSEDED',
        // The newer memory itself, as Fact.supersededBy is a Fact.
        supersededBy: { id: lisbon.id, content: 'I live in Lisbon now.', status: 'ACTIVE' },
      });
      expect(porto.validTo).not.toBeNull();
      expect(porto.history.map((h) => h.action)).toEqual(['CREATED', 'SUPERSEDED']);
      expect(porto.history[1]).toMatchObject({ fromStatus: 'ACTIVE', relatedMemoryId: lisbon.id });
    });

    it('finds memories by keyword, by typo and by meaning, and pages through them', async () => {
      const byWord = await listMemories(t, user, { search: 'marathon' });
      expect(byWord.map((m) => m.content)).toEqual(['I want to run a marathon next year.']);
      const byTypo = await listMemories(t, user, { search: 'marathn' });
      expect(byTypo[0]?.content).toBe('I want to run a marathon next year.');
      const byMeaning = await listMemories(t, user, { search: 'which city is my home' });
      expect(byMeaning[0]?.content).toMatch(/^I live in (Lisbon now|Porto)\.$/);
      expect(await listMemories(t, user, { search: 'submarine volcano' })).toEqual([]);

      const first = ok(
        await t.gql<{
          memories: {
            nodes: { id: string }[];
            pageInfo: { endCursor: string; hasNextPage: boolean };
          };
        }>(
          'query { memories(first: 2) { nodes { id } pageInfo { endCursor hasNextPage } } }',
          {},
          user,
        ),
      ).memories;
      expect(first.pageInfo.hasNextPage).toBe(true);
      const next = ok(
        await t.gql<{ memories: { nodes: { id: string }[] } }>(
          'query($after: String) { memories(first: 50, after: $after) { nodes { id } } }',
          { after: first.pageInfo.endCursor },
          user,
        ),
      ).memories;
      const all = await listMemories(t, user);
      expect([...first.nodes, ...next.nodes].map((n) => n.id)).toEqual(all.map((m) => m.id));
      expect((await listMemories(t, user, { type: 'GOAL' })).every((m) => m.type === 'GOAL')).toBe(
        true,
      );
      expect(await listMemories(t, user, { status: 'ARCHIVED' })).toHaveLength(1);
    });

    it('reports stats', async () => {
      const stats = ok(
        await t.gql<{ memoryStats: Record<string, unknown> }>(
          `{ memoryStats { total byType { type count } byStatus { status count } turnsExamined
             memoriesExtracted creationRatePer10Turns replies repliesUsingMemories
             replyMemoryShare duplicatesMerged duplicateRate } }`,
          {},
          user,
        ),
      ).memoryStats;
      const rows = await rowsOf(ds, user.id);
      const [ext] = await ds.query(
        `SELECT count(*)::int AS turns, sum(created_count)::int AS created,
                sum(merged_count)::int AS merged
           FROM memory_extractions WHERE user_id = $1 AND outcome = 'EXTRACTED'`,
        [user.id],
      );
      expect(stats).toMatchObject({
        total: rows.length,
        turnsExamined: ext.turns,
        memoriesExtracted: ext.created,
        duplicatesMerged: 2,
        duplicateRate: Math.round((2 / (ext.created + 2)) * 10_000) / 10_000,
        creationRatePer10Turns: Math.round((ext.created / ext.turns) * 10 * 10_000) / 10_000,
        replies: ext.turns,
        repliesUsingMemories: 0,
        replyMemoryShare: 0,
      });
      expect(stats.byStatus).toEqual([
        { status: 'ACTIVE', count: rows.length - 1 },
        { status: 'ARCHIVED', count: 1 },
        { status: 'DELETED', count: 0 },
      ]);
    });
  });

  describe('the memory block of a reply', () => {
    let user: TestUser & { id: string };
    let legacyId: string;
    let conversationId: string;

    beforeAll(async () => {
      user = await signIn(t, 'context-user');
      legacyId = await createLegacy(t, user);
      const otherLegacy = await createLegacy(t, user, 'Grandpa');
      conversationId = await startConversation(t, user, legacyId, true);
      await rememberThis(t, user, 'I love jazz music.', { legacyId });
      await rememberThis(t, user, 'I want to write a book about Nana.', { legacyId });
      await rememberThis(t, user, 'I feel lonely on Sundays.', { legacyId, type: 'EMOTION' });
      await rememberThis(t, user, 'My daughter is called Mia.');
      await rememberThis(t, user, 'I restore old boats.', { legacyId: otherLegacy });
      const archived = await rememberThis(t, user, 'I used to smoke.', { legacyId });
      await ds.query(`UPDATE memories SET status = 'ARCHIVED', archived_at = now() WHERE id = $1`, [
        archived.memory.id,
      ]);
      const stranger = await signIn(t, 'context-stranger');
      await rememberThis(t, stranger, 'I love jazz music too.');
    });

    const assemble = async (query: string, userOverride?: Partial<UserEntity>) => {
      const u = await ds.getRepository(UserEntity).findOneByOrFail({ id: user.id });
      return t.app.get(ContextAssemblerService).assemble({
        user: { ...u, ...userOverride },
        conversation: await ds
          .getRepository(ConversationEntity)
          .findOneByOrFail({ id: conversationId }),
        legacy: await ds.getRepository(LegacyEntity).findOneByOrFail({ id: legacyId }),
        query,
      });
    };

    it('holds at most 10 memories and at most 600 tokens', async () => {
      const things = [
        'I grow tomatoes on my balcony.',
        'My brother lives in Lisbon.',
        'I am learning to play the cello.',
        'I run five kilometres every morning.',
        'My favourite film is Casablanca.',
        'I work night shifts at the hospital.',
        'I collect old postcards from Italy.',
        'My cat is called Pepper.',
        'I want to visit Japan next spring.',
        'I bake sourdough bread on Saturdays.',
        'I am allergic to peanuts.',
        'My best friend moved to Canada.',
        'I volunteer at the library on Tuesdays.',
        'I prefer tea over coffee.',
        'I am saving for a sailing boat.',
        'I sing in a choir at church.',
      ];
      const capped = await signIn(t, 'context-capped');
      const cappedLegacy = await createLegacy(t, capped);
      const cappedConversation = await startConversation(t, capped, cappedLegacy, true);
      // Half tied to the legacy, half global: MEMORY_MAX_ACTIVE is 8 per scope in this suite.
      for (const [i, thing] of things.entries()) {
        const detail = ` ${'It matters to me a great deal, and I think about it most days. '.repeat(i < 8 ? 0 : 3)}`;
        await rememberThis(
          t,
          capped,
          `${thing}${detail}`.trim(),
          i % 2 ? {} : { legacyId: cappedLegacy },
        );
      }
      const context = await t.app.get(ContextAssemblerService).assemble({
        user: await ds.getRepository(UserEntity).findOneByOrFail({ id: capped.id }),
        conversation: await ds
          .getRepository(ConversationEntity)
          .findOneByOrFail({ id: cappedConversation }),
        legacy: await ds.getRepository(LegacyEntity).findOneByOrFail({ id: cappedLegacy }),
        query: 'What do you know about me?',
      });
      const block = context.sections.find((s) => s.name === 'memories')!;
      expect(block.items.length).toBeGreaterThan(0);
      expect(block.items.length).toBeLessThanOrEqual(10);
      expect(block.items.reduce((n, i) => n + i.tokens, 0)).toBeLessThanOrEqual(600);
      // Sixteen candidates: the caps, not a lack of memories, decided what was left out.
      expect(context.dropped.filter((d) => d.item.sourceType === 'MEMORY').length).toBe(
        16 - block.items.length,
      );
    });

    it('ranks the active memories of this legacy and the global ones, relevant first', async () => {
      const context = await assemble('What kind of music do I like?');
      const block = context.sections.find((s) => s.name === 'memories')!;
      const texts = block.items.map((i) => i.text);
      expect(texts).toHaveLength(4);
      expect(texts[0]).toBe('- I love jazz music.');
      expect(texts).toEqual(
        expect.arrayContaining([
          '- I want to write a book about Nana.',
          '- I feel lonely on Sundays.',
          '- My daughter is called Mia.',
        ]),
      );
      expect(context.system).toContain('What you remember about the person you are talking with');
      const jazz = block.items[0];
      expect(jazz.scores).toMatchObject({ typeWeight: 1.2, confidence: 1, references: 0 });
      expect(jazz.scores.recency).toBeCloseTo(1, 2);
      expect(jazz.score).toBeCloseTo(
        jazz.scores.usefulness + jazz.scores.relevanceWeight * jazz.scores.relevance,
        6,
      );
      expect(jazz.provenance).toMatchObject({ sourceType: 'MEMORY', messageIds: [] });
    });

    it('weighs goals over emotions when relevance is equal', async () => {
      const context = await assemble('');
      const items = context.sections.find((s) => s.name === 'memories')!.items;
      const goal = items.find((i) => i.text.includes('book'))!;
      const emotion = items.find((i) => i.text.includes('lonely'))!;
      expect(goal.scores.typeWeight).toBe(1.5);
      expect(emotion.scores.typeWeight).toBe(0.8);
      expect(items.indexOf(goal)).toBeLessThan(items.indexOf(emotion));
    });

    it('gives nothing while memory is paused', async () => {
      const context = await assemble('music', { memoryPaused: true });
      expect(context.sections.find((s) => s.name === 'memories')).toBeUndefined();
    });

    it('records the memories a reply used once, raising their reference counts', async () => {
      const context = await assemble('music');
      const { assistantMessageId } = await exchange(t, user, conversationId, 'Hello again.');
      const message = await ds
        .getRepository(MessageEntity)
        .findOneByOrFail({ id: assistantMessageId });
      const assembler = t.app.get(ContextAssemblerService);
      await assembler.markUsed(context, message, ds.manager);
      await assembler.markUsed(context, message, ds.manager);
      const used = ok(
        await t.gql<{
          conversation: {
            messages: {
              nodes: { id: string; usedMemories: { id: string; referenceCount: number }[] }[];
            };
          };
        }>(
          `query($id: ID!) { conversation(id: $id) { messages(first: 10) {
             nodes { id usedMemories { id referenceCount lastReferencedAt } } } } }`,
          { id: conversationId },
          user,
        ),
      ).conversation.messages.nodes.find((n) => n.id === assistantMessageId)!;
      const given = context.sections.find((s) => s.name === 'memories')!.items.map((i) => i.id);
      expect(used.usedMemories.map((m) => m.id).sort()).toEqual([...given].sort());
      expect(used.usedMemories.every((m) => m.referenceCount === 1)).toBe(true);
      const stats = ok(
        await t.gql<{ memoryStats: { repliesUsingMemories: number } }>(
          '{ memoryStats { repliesUsingMemories } }',
          {},
          user,
        ),
      );
      expect(stats.memoryStats.repliesUsingMemories).toBe(1);
    });
  });

  describe('the cap', () => {
    it('archives the least referenced, oldest active memories of a scope past the limit', async () => {
      const user = await signIn(t, 'cap-user');
      const legacyId = await createLegacy(t, user);
      const start = Date.now() - 20 * DAY_MS;
      const ids: string[] = [];
      const texts = [
        'I keep bees.',
        'I bake bread on weekends.',
        'I speak Portuguese.',
        'I play the cello.',
        'I volunteer at the library.',
        'I collect vinyl records.',
        'I knit scarves for friends.',
        'I fly kites at the beach.',
      ];
      for (const [i, text] of texts.entries()) {
        setNow(clock, new Date(start + i * DAY_MS));
        ids.push((await rememberThis(t, user, text)).memory.id);
      }
      await rememberThis(t, user, 'A memory about this legacy only.', { legacyId });
      // The oldest is the most referenced: the second oldest is the least useful.
      await ds.query(`UPDATE memories SET reference_count = 5 WHERE id = $1`, [ids[0]]);
      setNow(clock, new Date(start + 9 * DAY_MS));
      const sixth = await rememberThis(t, user, 'I climb mountains.');
      const rows = await rowsOf(ds, user.id);
      const status = (id: string) => rows.find((r) => r.id === id)!.status;
      expect(status(ids[1])).toBe('ARCHIVED');
      expect(rows.filter((r) => r.status === 'ACTIVE')).toHaveLength(9);
      expect(status(sixth.memory.id)).toBe('ACTIVE');
      const archived = ok(
        await t.gql<{ memory: MemoryView }>(
          `query($id: ID!) { memory(id: $id) { ${MEMORY_FIELDS} } }`,
          { id: ids[1] },
          user,
        ),
      ).memory;
      expect(archived).toMatchObject({ archiveReason: 'CAP', status: 'ARCHIVED' });

      // Restoring it makes room by archiving the next least useful one.
      const restored = ok(
        await t.gql<{ restoreMemory: { status: string } }>(
          'mutation($id: ID!) { restoreMemory(id: $id) { status } }',
          { id: ids[1] },
          user,
        ),
      );
      expect(restored.restoreMemory.status).toBe('ACTIVE');
      const after = await rowsOf(ds, user.id);
      expect(after.find((r) => r.id === ids[2])!.status).toBe('ARCHIVED');
      expect(after.filter((r) => r.status === 'ACTIVE' && r.legacy_id === null)).toHaveLength(8);
    });
  });

  describe('retention', () => {
    it('archives memories over two years old and unreferenced for six months, unless long-term', async () => {
      const keeper = await signIn(t, 'retention-keeper');
      const user = await signIn(t, 'retention-user');
      ok(await t.gql('mutation { updateMe(input: { longTermMemory: true }) { id } }', {}, keeper));
      const now = new Date();
      setNow(clock, new Date(now.getTime() - 3 * 365 * DAY_MS));
      const old = (await rememberThis(t, user, 'I collect stamps.')).memory.id;
      const oldButUsed = (await rememberThis(t, user, 'I play chess on Fridays.')).memory.id;
      const kept = (await rememberThis(t, keeper, 'I collect coins.')).memory.id;
      setNow(clock, new Date(now.getTime() - 60 * DAY_MS));
      const young = (await rememberThis(t, user, 'I grow tomatoes.')).memory.id;
      await ds.query(`UPDATE memories SET last_referenced_at = $2 WHERE id = $1`, [
        oldButUsed,
        new Date(now.getTime() - 30 * DAY_MS),
      ]);
      setNow(clock, now);

      await jobs.runHandler(`scheduled:${RETENTION_TASK}`, {});
      const statuses = async () =>
        Object.fromEntries(
          (
            await ds.query(`SELECT id, status, archive_reason FROM memories WHERE id = ANY($1)`, [
              [old, oldButUsed, kept, young],
            ])
          ).map((r: { id: string; status: string; archive_reason: string | null }) => [
            r.id,
            `${r.status}${r.archive_reason ? `:${r.archive_reason}` : ''}`,
          ]),
        );
      const first = await statuses();
      expect(first).toEqual({
        [old]: 'ARCHIVED:RETENTION',
        [oldButUsed]: 'ACTIVE',
        [kept]: 'ACTIVE',
        [young]: 'ACTIVE',
      });
      const snapshot = await ds.query(`SELECT * FROM memories WHERE id = ANY($1) ORDER BY id`, [
        [old, oldButUsed, kept, young],
      ]);
      await jobs.runHandler(`scheduled:${RETENTION_TASK}`, {});
      expect(
        await ds.query(`SELECT * FROM memories WHERE id = ANY($1) ORDER BY id`, [
          [old, oldButUsed, kept, young],
        ]),
      ).toEqual(snapshot);
      // Archived memories stay listed and exportable, and come back on request.
      expect((await listMemories(t, user)).map((m) => m.id)).toContain(old);
      const exported = ok(
        await t.gql<{ exportMemories: { data: string } }>(
          '{ exportMemories(format: JSON) { data } }',
          {},
          user,
        ),
      );
      expect(exported.exportMemories.data).toContain('I collect stamps.');
    });
  });

  describe('forgetting and the purge', () => {
    it('keeps a forgotten memory restorable for the undo window, then deletes it and its vectors', async () => {
      const user = await signIn(t, 'purge-user');
      const t0 = new Date();
      setNow(clock, t0);
      const a = (await rememberThis(t, user, 'I drive a red car.')).memory.id;
      const b = (await rememberThis(t, user, 'I sing in a choir.')).memory.id;
      expect(await vectorCount(ds, [a, b])).toBe(2);
      const forgotten = ok(
        await t.gql<{ forgetMemory: MemoryView }>(
          `mutation($id: ID!) { forgetMemory(id: $id) { ${MEMORY_FIELDS} } }`,
          { id: a },
          user,
        ),
      ).forgetMemory;
      expect(forgotten).toMatchObject({ status: 'DELETED', deletedAt: t0.toISOString() });
      expect(forgotten.restorableUntil).toBe(new Date(t0.getTime() + 30 * DAY_MS).toISOString());
      ok(await t.gql('mutation($id: ID!) { forgetMemory(id: $id) { id } }', { id: b }, user));
      expect(await listMemories(t, user)).toEqual([]);
      expect((await listMemories(t, user, { status: 'DELETED' })).map((m) => m.id).sort()).toEqual(
        [a, b].sort(),
      );

      setNow(clock, new Date(t0.getTime() + 29 * DAY_MS));
      await jobs.runHandler(`scheduled:${PURGE_TASK}`, {});
      expect((await rowsOf(ds, user.id)).map((r) => r.status)).toEqual(['DELETED', 'DELETED']);
      const restored = ok(
        await t.gql<{ restoreMemory: MemoryView }>(
          `mutation($id: ID!) { restoreMemory(id: $id) { ${MEMORY_FIELDS} } }`,
          { id: b },
          user,
        ),
      ).restoreMemory;
      expect(restored).toMatchObject({ status: 'ACTIVE', deletedAt: null, restorableUntil: null });
      expect(restored.history.map((h) => h.action)).toEqual(['CREATED', 'FORGOTTEN', 'RESTORED']);

      setNow(clock, new Date(t0.getTime() + 31 * DAY_MS));
      const late = await t.gql(
        'mutation($id: ID!) { restoreMemory(id: $id) { id } }',
        { id: a },
        user,
      );
      expect(late.errors![0].extensions).toMatchObject({
        code: 'CONFLICT',
        reason: 'UNDO_WINDOW_PASSED',
      });
      await jobs.runHandler(`scheduled:${PURGE_TASK}`, {});
      expect((await rowsOf(ds, user.id)).map((r) => r.id)).toEqual([b]);
      expect(await vectorCount(ds, [a])).toBe(0);
      expect(await vectorCount(ds, [b])).toBe(1);
      const gone = await t.gql('query($id: ID!) { memory(id: $id) { id } }', { id: a }, user);
      expect(codeOf(gone)).toBe('NOT_FOUND');

      const snapshot = await ds.query(`SELECT * FROM memories ORDER BY id`);
      await jobs.runHandler(`scheduled:${PURGE_TASK}`, {});
      expect(await ds.query(`SELECT * FROM memories ORDER BY id`)).toEqual(snapshot);
    });

    it('forgets by conversation or turn, and clears everything at once on confirmation', async () => {
      const user = await signIn(t, 'forget-user');
      const legacyId = await createLegacy(t, user);
      const conversationId = await startConversation(t, user, legacyId, true);
      const one = await exchange(t, user, conversationId, 'I live in Leeds.');
      const two = await exchange(t, user, conversationId, 'I work as a baker.');
      await jobs.drain();
      await rememberThis(t, user, 'I am allergic to cats.');

      const FORGET = `mutation($filter: ForgetMemoriesFilter!) {
        forgetMemories(filter: $filter) { forgottenCount memoryIds restorableUntil } }`;
      const empty = await t.gql(FORGET, { filter: {} }, user);
      expect(empty.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'filter',
      });
      const byTurn = ok(
        await t.gql<{ forgetMemories: { forgottenCount: number } }>(
          FORGET,
          { filter: { sourceMessageId: one.userMessageId } },
          user,
        ),
      );
      expect(byTurn.forgetMemories.forgottenCount).toBe(1);
      const byConversation = ok(
        await t.gql<{ forgetMemories: { forgottenCount: number } }>(
          FORGET,
          { filter: { conversationId } },
          user,
        ),
      );
      expect(byConversation.forgetMemories.forgottenCount).toBe(1);
      expect((await listMemories(t, user)).map((m) => m.content)).toEqual([
        'I am allergic to cats.',
      ]);
      void two;

      const ids = (await rowsOf(ds, user.id)).map((r) => r.id);
      expect(await vectorCount(ds, ids)).toBe(3);
      const wrong = await t.gql('mutation { clearAllMemories(confirm: "yes") }', {}, user);
      expect(wrong.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'confirm',
      });
      const cleared = ok(
        await t.gql<{ clearAllMemories: number }>(
          'mutation { clearAllMemories(confirm: "DELETE ALL MY MEMORIES") }',
          {},
          user,
        ),
      );
      expect(cleared.clearAllMemories).toBe(3);
      expect(await rowsOf(ds, user.id)).toEqual([]);
      expect(await vectorCount(ds, ids)).toBe(0);
      // The turns stay examined: old extraction jobs never bring the memories back.
      await jobs.runHandler(EXTRACT_JOB, { ...one });
      expect(await rowsOf(ds, user.id)).toEqual([]);
    });
  });

  describe('export and import', () => {
    it('round-trips an export: same memories, duplicates merged, foreign ids kept', async () => {
      const user = await signIn(t, 'export-user');
      const legacyId = await createLegacy(t, user);
      await rememberThis(t, user, 'I love "quoted", comma-separated things.', { legacyId });
      const goal = await rememberThis(t, user, 'I want to visit Japan.');
      const gone = await rememberThis(t, user, 'I hate mornings.');
      await ds.query(
        `UPDATE memories SET reference_count = 4, last_referenced_at = now() WHERE id = $1`,
        [goal.memory.id],
      );
      ok(
        await t.gql(
          'mutation($id: ID!) { forgetMemory(id: $id) { id } }',
          { id: gone.memory.id },
          user,
        ),
      );
      const EXPORT = `query($format: MemoryExportFormat!) {
        exportMemories(format: $format) { format filename contentType count data } }`;
      const json = ok(
        await t.gql<{ exportMemories: { data: string; count: number; filename: string } }>(
          EXPORT,
          { format: 'JSON' },
          user,
        ),
      ).exportMemories;
      expect(json.count).toBe(2);
      expect(json.filename).toMatch(/^keepsake-memories-\d{4}-\d{2}-\d{2}\.json$/);
      const csv = ok(
        await t.gql<{ exportMemories: { data: string; contentType: string } }>(
          EXPORT,
          { format: 'CSV' },
          user,
        ),
      ).exportMemories;
      expect(csv.contentType).toMatch(/^text\/csv/);
      expect(csv.data.split('\r\n')[0]).toBe(
        'id,type,content,confidence,status,source,legacyId,conversationId,sourceMessageId,sourceTurnIndex,conversationMode,sourceReference,referenceCount,lastReferencedAt,validFrom,validTo,supersededBy,archivedAt,archiveReason,createdAt,updatedAt,history',
      );
      expect(csv.data).toContain('"I love ""quoted"", comma-separated things."');

      const before = await listMemories(t, user);
      ok(await t.gql('mutation { clearAllMemories(confirm: "DELETE ALL MY MEMORIES") }', {}, user));
      const IMPORT = `mutation($json: String!) {
        importMemories(json: $json) { importedCount mergedCount skippedCount memoryIds } }`;
      const imported = ok(
        await t.gql<{ importMemories: { importedCount: number; mergedCount: number } }>(
          IMPORT,
          { json: json.data },
          user,
        ),
      ).importMemories;
      expect(imported).toMatchObject({ importedCount: 2, mergedCount: 0, skippedCount: 0 });
      const after = await listMemories(t, user);
      const keyOf = (m: MemoryView, imported = false) => ({
        type: m.type,
        content: m.content,
        confidence: m.confidence,
        status: m.status,
        legacyId: m.legacyId,
        referenceCount: m.referenceCount,
        lastReferencedAt: m.lastReferencedAt,
        validFrom: m.validFrom,
        createdAt: m.createdAt,
        history: imported ? m.history.slice(0, -1) : m.history,
      });
      expect(after.map((m) => keyOf(m, true))).toEqual(before.map((m) => keyOf(m)));
      expect(after.map((m) => m.sourceReference)).toEqual(before.map((m) => m.id));
      expect(after.every((m) => m.source === 'IMPORT')).toBe(true);
      expect(after[0].history.at(-1)).toMatchObject({
        action: 'IMPORTED',
        details: expect.objectContaining({ originalId: before[0].id }),
      });
      expect(
        await vectorCount(
          ds,
          after.map((m) => m.id),
        ),
      ).toBe(2);

      // Importing the same file again adds nothing.
      const again = ok(
        await t.gql<{ importMemories: { importedCount: number; mergedCount: number } }>(
          IMPORT,
          { json: json.data },
          user,
        ),
      ).importMemories;
      expect(again).toMatchObject({ importedCount: 0, mergedCount: 2 });
      expect(await listMemories(t, user)).toHaveLength(2);
    });

    it("merges another system's duplicates and makes its unknown legacies global", async () => {
      const user = await signIn(t, 'import-user');
      await rememberThis(t, user, 'I like green tea.');
      const foreignLegacy = '7d0f1b9e-1111-4c1c-9a3e-2b1f5e7a9c00';
      const file = JSON.stringify([
        { id: 'ext-1', content: 'I like green tea!', type: 'PREFERENCE', referenceCount: 2 },
        { id: 'ext-2', content: 'I swim in the sea.', type: 'PATTERN', legacyId: foreignLegacy },
        { id: 'ext-3', content: 'I swim in the sea', type: 'PATTERN', legacyId: foreignLegacy },
        { id: 'ext-4', content: 'Gone', status: 'DELETED' },
      ]);
      const result = ok(
        await t.gql<{ importMemories: Record<string, number> }>(
          'mutation($json: String!) { importMemories(json: $json) { importedCount mergedCount skippedCount } }',
          { json: file },
          user,
        ),
      ).importMemories;
      expect(result).toEqual({ importedCount: 1, mergedCount: 2, skippedCount: 1 });
      const all = await listMemories(t, user);
      expect(all.find((m) => m.content === 'I like green tea.')).toMatchObject({
        referenceCount: 2,
      });
      const swim = all.find((m) => m.content === 'I swim in the sea.')!;
      expect(swim).toMatchObject({ legacyId: null, sourceReference: 'ext-2', source: 'IMPORT' });
      expect(swim.history.at(-1)!.details).toMatchObject({ originalLegacyId: foreignLegacy });

      const bad = await t.gql(
        'mutation($json: String!) { importMemories(json: $json) { importedCount } }',
        { json: JSON.stringify([{ content: 'x', type: 'DREAM' }]) },
        user,
      );
      expect(bad.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'json' });
      expect(bad.errors![0].message).toMatch(/memories\[0\]\.type/);
    });
  });
  describe('fences: what a member clears or forgets stays gone from extraction in flight', () => {
    const extraction = () => t.app.get(MemoryExtractionService);
    const SAID = 'My sister Anna and I walk by the river every Sunday.';

    async function member(sub: string) {
      const user = await signIn(t, sub);
      const legacyId = await createLegacy(t, user);
      return { user, conversationId: await startConversation(t, user, legacyId, true) };
    }

    const clear = async (user: TestUser) =>
      ok(await t.gql('mutation { clearAllMemories(confirm: "DELETE ALL MY MEMORIES") }', {}, user));

    /** Runs an extraction held between its read of the turn and its write: `meanwhile` runs then. */
    async function heldRun(
      ex: { userMessageId: string; assistantMessageId: string },
      meanwhile: () => Promise<unknown>,
    ) {
      const llm = t.app.get<LanguageModel>(LANGUAGE_MODEL);
      const original = llm.extractMemories.bind(llm);
      const spy = jest.spyOn(llm, 'extractMemories').mockImplementation(async (input) => {
        const out = await original(input);
        await meanwhile();
        return out;
      });
      try {
        return { outcome: await extraction().run(ex), modelCalls: spy.mock.calls.length };
      } finally {
        spy.mockRestore();
      }
    }

    it('stores nothing from an exchange said before clearAllMemories, cleared while its model ran', async () => {
      const { user, conversationId } = await member('fence-clear-held');
      const ex = await exchange(t, user, conversationId, SAID);
      const { outcome, modelCalls } = await heldRun(ex, () => clear(user));
      expect(modelCalls).toBe(1);
      expect(outcome).toBe('cleared');
      expect(await rowsOf(ds, user.id)).toEqual([]);
      expect(await ledger(ex.userMessageId)).toMatchObject({
        outcome: 'CLEARED',
        created_count: 0,
        done: true,
      });
      // Final: the job run again (a retry, a backfill) stores nothing either.
      expect(await extraction().run(ex)).toBe('already-done');
      expect(await rowsOf(ds, user.id)).toEqual([]);
    });

    it('stores nothing from an exchange said before the clear whose job runs after it, and asks no model', async () => {
      const { user, conversationId } = await member('fence-clear-queued');
      const ex = await exchange(t, user, conversationId, SAID);
      await clear(user);
      const { outcome, modelCalls } = await heldRun(ex, () => Promise.resolve());
      expect(outcome).toBe('cleared');
      expect(modelCalls).toBe(0);
      expect(await rowsOf(ds, user.id)).toEqual([]);
      expect(await ledger(ex.userMessageId)).toMatchObject({ outcome: 'CLEARED', done: true });
      // What is said after the clear is remembered as before.
      const after = await exchange(t, user, conversationId, SAID);
      expect(await extraction().run(after)).toMatchObject({ saved: 2 });
      expect(await rowsOf(ds, user.id)).toHaveLength(2);
    });

    it('does not bring back a memory forgotten while an exchange restating it was extracted', async () => {
      const { user, conversationId } = await member('fence-forget-held');
      await extraction().run(await exchange(t, user, conversationId, SAID));
      const [first, second] = await rowsOf(ds, user.id);
      expect([first, second].map((m) => m.status)).toEqual(['ACTIVE', 'ACTIVE']);
      // The same said again; while it is read, the member forgets one of the two memories.
      const again = await exchange(t, user, conversationId, SAID);
      const { outcome } = await heldRun(again, () =>
        t.gql('mutation($id: ID!) { forgetMemory(id: $id) { id } }', { id: first.id }, user),
      );
      expect(outcome).toMatchObject({ proposed: 2, saved: 1 });
      const rows = await rowsOf(ds, user.id);
      // The forgotten one stays forgotten and comes back under no other row; the other is
      // referenced once more.
      expect(rows.map((r) => [r.id, r.status, r.reference_count])).toEqual([
        [first.id, 'DELETED', first.reference_count],
        [second.id, 'ACTIVE', second.reference_count + 1],
      ]);
      // Restored, it is the member's again: a restatement references it.
      ok(
        await t.gql('mutation($id: ID!) { restoreMemory(id: $id) { id } }', { id: first.id }, user),
      );
      await extraction().run(await exchange(t, user, conversationId, SAID));
      const restored = (await rowsOf(ds, user.id)).find((r) => r.id === first.id)!;
      expect([restored.status, restored.reference_count]).toEqual([
        'ACTIVE',
        first.reference_count + 1,
      ]);
    });
  });
});
