import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { SearchStatsRepository } from '../../src/search/search-stats.repository.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * The retrieval operations end to end: `context` for clients that call their own model,
 * `recall`, `retrievalDebug` and `memoryMetricsReport`, on an imported conversation whose
 * turns carry their own ids in metadata, and on the agent's replies.
 */

const TOPICS = [
  'Grandpa Joe grew tomatoes and beans in the allotment behind the church.',
  'He repaired old radios on the kitchen table every winter evening.',
  'Joe served as a navy radio operator on a destroyer in the Pacific.',
  'His favourite dish was his mother’s goulash with caraway seeds.',
  'He sang bass in the village choir until he was eighty.',
  'Joe and Rose married in 1961 at St. Anne’s in Cleveland.',
  'He kept a journal of every fishing trip on Lake Erie with the catch weighed.',
  'He taught all of his grandchildren to play cribbage.',
];

interface Item {
  sourceType: string;
  recallItemId: string;
  sourceId: string;
  section: string;
  text: string;
  tokens: number;
  score: number;
  isCode: boolean;
  scores: { name: string; value: number }[];
  provenance: {
    sourceType: string;
    sourceId: string;
    conversationId: string | null;
    messageIds: string[];
    messageMetadata: Record<string, unknown>[];
    turnRange: { start: number; end: number } | null;
    occurredAt: string | null;
  };
}

const ITEM = `sourceType recallItemId sourceId section text tokens score isCode scores { name value }
  provenance { sourceType sourceId conversationId messageIds messageMetadata turnRange { start end } occurredAt }`;
const CONTEXT = `query($c: ID!, $q: String!, $b: Int) {
  context(conversationId: $c, query: $q, budget: $b) {
    persona system tokenCount budget truncated
    sections { name title tokens items { ${ITEM} } }
    items { ${ITEM} }
    recent { id turnIndex }
  }
}`;
const RECALL = `query($l: ID!, $q: String!, $first: Int) {
  recall(legacyId: $l, query: $q, first: $first) {
    edges { score scores { name value }
      node { id sourceType sourceId text forgettable provenance { messageIds messageMetadata } } }
  }
}`;
const DEBUG = `query($c: ID!, $q: String!) {
  retrievalDebug(conversationId: $c, query: $q) {
    query identifiers codeQuery refersBack asksSummary timeExpression clock fusion hybrid goodHits widened
    widenReason fallback degraded failedStage embedMs searchMs totalMs tokenCount budget truncated
    candidates { sourceType recallItemId sourceId scope score good kept section reason text tokens
      paths { path score rank raw } scores { name value } provenance { messageIds } }
  }
}`;
const REPORT = `query($from: DateTime!, $to: DateTime!) {
  memoryMetricsReport(from: $from, to: $to) {
    from to assemblies recalls hitRate fallbackShare wideningShare truncationShare degradedShare
    failureShare p50Ms p95Ms embedP50Ms embedP95Ms searchP50Ms searchP95Ms recallP50Ms
    recallP95Ms meanTokens hitsByPath { path hits } composition { sourceType items share }
  }
}`;

describe('Search operations (e2e)', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let legacyId: string;
  let conversationId: string;

  async function gql<T>(query: string, vars: Record<string, unknown>, as: TestUser): Promise<T> {
    const res = await t.gql<T>(query, vars, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  }

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      CONTEXT_RECENT_TURNS: '4',
    });
    owner = await t.user('search-e2e-owner', { email: 'owner@example.com' });
    admin = await t.user('search-e2e-admin', { email: 'admin@example.com', admin: true });
    ({
      createLegacy: { id: legacyId },
    } = await gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }',
      {},
      owner,
    ));
    // 48 turns: enough for the summaries module to write a chunk of the first 20.
    const messages = Array.from({ length: 48 }, (_, i) => ({
      role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
      content: i % 2 === 0 ? TOPICS[(i / 2) % TOPICS.length] : `Tell me more about that (${i}).`,
      occurredAt: new Date(Date.UTC(2023, 4, 1 + Math.floor(i / 6), 10, i)).toISOString(),
      metadata: { source_id: `ext-${i}`, speaker: i % 2 === 0 ? 'Ann' : 'Keepsake' },
    }));
    ({
      importConversation: {
        conversation: { id: conversationId },
      },
    } = await gql<{ importConversation: { conversation: { id: string } } }>(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { conversation { id } } }`,
      { input: { legacyId, title: 'memories of Joe', messages } },
      owner,
    ));
    await t.app.get(JobsService).drain({ timeoutMs: 120_000 });
  });
  afterAll(() => t.close());

  describe('context', () => {
    it('returns the sections, items with scores and provenance, tokens and truncation', async () => {
      const { context } = await gql<{
        context: {
          persona: string;
          system: string;
          tokenCount: number;
          budget: number;
          truncated: boolean;
          sections: { name: string; title: string; tokens: number; items: Item[] }[];
          items: Item[];
          recent: { turnIndex: number }[];
        };
      }>(CONTEXT, { c: conversationId, q: 'What did Joe do in the navy?' }, owner);
      expect(context.budget).toBe(1000);
      expect(context.tokenCount).toBeLessThanOrEqual(1000);
      expect(context.recent.map((m) => m.turnIndex)).toEqual([44, 45, 46, 47]);
      const turns = context.sections.find((s) => s.name === 'TURNS')!;
      expect(turns.items.length).toBeGreaterThan(0);
      expect(turns.items.length).toBeLessThanOrEqual(6);
      const top = turns.items[0];
      expect(top.text).toContain('navy radio operator');
      // The imported turn's own id and speaker come back through provenance.
      expect(top.provenance).toMatchObject({
        sourceType: 'TURN',
        sourceId: top.sourceId,
        conversationId,
        messageIds: [expect.any(String)],
        messageMetadata: [{ source_id: expect.stringMatching(/^ext-\d+$/), speaker: 'Ann' }],
      });
      expect(top.recallItemId).toBe(`TURN:${top.sourceId}`);
      expect(top.provenance.turnRange!.start).toBeLessThan(44);
      expect(top.scores.map((s) => s.name)).toEqual(
        expect.arrayContaining(['dense', 'lexical', 'identifier', 'time', 'neighbor', 'final']),
      );
      const summaries = context.sections.find((s) => s.name === 'SUMMARIES');
      expect(summaries?.items[0].provenance.messageIds).toHaveLength(20);
      // Items are given whole, in section order; the token count covers them.
      for (const item of context.items) expect(context.system).toContain(item.text);
      expect(context.items.map((i) => i.recallItemId)).toEqual(
        context.sections.flatMap((s) => s.items.map((i) => i.recallItemId)),
      );
      expect(context.tokenCount).toBe(context.sections.reduce((a, s) => a + s.tokens, 0));
      // Deterministic: the same question gives the same prompt, item for item.
      const again = await gql<{ context: { system: string; items: Item[] } }>(
        CONTEXT,
        { c: conversationId, q: 'What did Joe do in the navy?' },
        owner,
      );
      expect(again.context.items.map((i) => i.recallItemId)).toEqual(
        context.items.map((i) => i.recallItemId),
      );
      expect(again.context.system).toBe(context.system);
    });

    it('drops whole items to stay within a small budget, and says so', async () => {
      const { context } = await gql<{
        context: { tokenCount: number; truncated: boolean; items: Item[]; system: string };
      }>(CONTEXT, { c: conversationId, q: 'Joe navy radio fishing choir', b: 60 }, owner);
      expect(context.truncated).toBe(true);
      expect(context.tokenCount).toBeLessThanOrEqual(60);
      for (const item of context.items) expect(context.system).toContain(item.text);
    });

    it('rejects a blank query and a budget over the hard maximum', async () => {
      const blank = await t.gql(CONTEXT, { c: conversationId, q: '   ' }, owner);
      expect(blank.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'query' });
      const big = await t.gql(CONTEXT, { c: conversationId, q: 'x', b: 2001 }, owner);
      expect(big.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    });
  });

  describe('recall', () => {
    it('returns stable ids, forgettable marks and the imported turns’ own ids', async () => {
      const ask = async () =>
        (
          await gql<{
            recall: {
              edges: {
                score: number;
                node: {
                  id: string;
                  sourceType: string;
                  sourceId: string;
                  text: string;
                  forgettable: boolean;
                  provenance: { messageIds: string[]; messageMetadata: Record<string, unknown>[] };
                };
              }[];
            };
          }>(RECALL, { l: legacyId, q: 'cribbage with the grandchildren', first: 5 }, owner)
        ).recall.edges.map((e) => e.node);
      const first = await ask();
      expect(first).toHaveLength(5);
      expect(first[0]).toMatchObject({
        sourceType: 'TURN',
        id: `TURN:${first[0].sourceId}`,
        forgettable: false,
        text: expect.stringContaining('cribbage'),
      });
      expect(first[0].provenance.messageMetadata[0].source_id).toMatch(/^ext-/);
      // One result per turn, even when a turn has several chunks.
      const turnIds = first
        .filter((r) => r.sourceType === 'TURN')
        .map((r) => r.provenance.messageIds[0]);
      expect(new Set(turnIds).size).toBe(turnIds.length);
      expect((await ask()).map((r) => r.id)).toEqual(first.map((r) => r.id));
    });

    it('refuses to forget a turn or a summary one by one', async () => {
      const { recall } = await gql<{ recall: { edges: { node: { id: string } }[] } }>(
        RECALL,
        { l: legacyId, q: 'navy', first: 1 },
        owner,
      );
      const res = await t.gql(
        'mutation($id: ID!) { forgetRecallItem(id: $id) { forgotten } }',
        { id: recall.edges[0].node.id },
        owner,
      );
      expect(res.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        reason: 'NOT_FORGETTABLE',
      });
      const junk = await t.gql(
        'mutation { forgetRecallItem(id: "MEMORY:nope") { forgotten } }',
        {},
        owner,
      );
      expect(junk.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    });
  });

  describe('retrievalDebug', () => {
    it('lists every candidate with its scores, kept or dropped and why', async () => {
      const { retrievalDebug: d } = await gql<{
        retrievalDebug: {
          query: string;
          identifiers: string[];
          codeQuery: boolean;
          asksSummary: boolean;
          timeExpression: string | null;
          fusion: string;
          hybrid: boolean;
          widened: boolean;
          tokenCount: number;
          candidates: {
            sourceType: string;
            scope: string;
            kept: boolean;
            section: string | null;
            reason: string;
            score: number;
            paths: { path: string; rank: number }[];
            scores: { name: string; value: number }[];
          }[];
        };
      }>(DEBUG, { c: conversationId, q: 'What did Joe do in the navy in May 2023?' }, owner);
      expect(d).toMatchObject({
        fusion: 'WEIGHTED',
        hybrid: true,
        timeExpression: 'May 2023',
        identifiers: [],
        codeQuery: false,
        asksSummary: false,
      });
      const kept = d.candidates.filter((c) => c.kept);
      const dropped = d.candidates.filter((c) => !c.kept);
      expect(kept.length).toBeGreaterThan(0);
      expect(dropped.length).toBeGreaterThan(0);
      for (const c of kept) expect(c.reason).toBe(`kept in ${c.section!.toLowerCase()}`);
      expect(
        dropped.some((c) =>
          /below the best turns|section holds at most|over the token budget/.test(c.reason),
        ),
      ).toBe(true);
      const turn = d.candidates.find((c) => c.sourceType === 'TURN')!;
      expect(turn.paths.map((p) => p.path)).toEqual(expect.arrayContaining(['DENSE']));
      expect(turn.scores.map((s) => s.name)).toEqual(
        expect.arrayContaining([
          'dense',
          'lexical',
          'trigram',
          'identifier',
          'time',
          'code',
          'neighbor',
          'base',
          'rrf',
          'standing',
          'final',
        ]),
      );
    });

    it("says when the message asks for a summary (the agent's turns are then not lowered)", async () => {
      const { retrievalDebug: d } = await gql<{ retrievalDebug: { asksSummary: boolean } }>(
        DEBUG,
        { c: conversationId, q: 'Can you summarize what Joe did in the navy?' },
        owner,
      );
      expect(d.asksSummary).toBe(true);
    });

    it('lets a platform admin see what the owner’s agent would see', async () => {
      const mine = await gql<{ retrievalDebug: { candidates: { recallItemId: string }[] } }>(
        DEBUG,
        { c: conversationId, q: 'choir' },
        owner,
      );
      const theirs = await gql<{ retrievalDebug: { candidates: { recallItemId: string }[] } }>(
        DEBUG,
        { c: conversationId, q: 'choir' },
        admin,
      );
      expect(theirs.retrievalDebug.candidates.map((c) => c.recallItemId)).toEqual(
        mine.retrievalDebug.candidates.map((c) => c.recallItemId),
      );
    });
  });

  describe('metrics', () => {
    it('records one row per assembly, replies included, with no message text', async () => {
      const ds = t.app.get(DataSource);
      const before = await ds.query(
        `SELECT operation, count(*)::int AS n FROM retrieval_metrics GROUP BY operation`,
      );
      const count = (rows: { operation: string; n: number }[], op: string) =>
        rows.find((r) => r.operation === op)?.n ?? 0;
      await gql(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { reply { id } } }',
        { i: { conversationId, content: 'Tell me about his navy days again.' } },
        owner,
      );
      const after = await ds.query(
        `SELECT operation, count(*)::int AS n FROM retrieval_metrics GROUP BY operation`,
      );
      expect(count(after, 'REPLY')).toBe(count(before, 'REPLY') + 1);
      const [row] = await ds.query(
        `SELECT * FROM retrieval_metrics WHERE operation = 'REPLY' ORDER BY created_at DESC LIMIT 1`,
      );
      expect(row).toMatchObject({
        user_id: expect.any(String),
        conversation_id: conversationId,
        hybrid: true,
        fusion: 'weighted',
      });
      // SEARCH_METRICS_TEXT is off: no text is kept beside the row.
      expect(
        await ds.query(`SELECT 1 FROM retrieval_metric_texts WHERE metric_id = $1`, [row.id]),
      ).toEqual([]);
      expect(row.hits_dense).toBeGreaterThan(0);
      expect(row.items).toBeGreaterThan(0);
      expect(row.total_ms).toBeGreaterThan(0);
      // The query is embedded once, by whichever section asks first; that time is recorded.
      // A sentence-encoder call takes milliseconds; a settled promise takes microseconds.
      expect(row.embed_ms).toBeGreaterThan(0.5);
      expect(row.embed_ms).toBeLessThanOrEqual(row.total_ms);
      expect(JSON.stringify(row)).not.toContain('navy');
    });

    it('reports hit rate, shares, latency and composition to platform admins', async () => {
      const { memoryMetricsReport: r } = await gql<{
        memoryMetricsReport: {
          assemblies: number;
          recalls: number;
          hitRate: number;
          truncationShare: number;
          p50Ms: number;
          p95Ms: number;
          composition: { sourceType: string; items: number; share: number }[];
          hitsByPath: { path: string; hits: number }[];
        };
      }>(REPORT, { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' }, admin);
      // Three context queries and one reply (debug runs are left out); three recalls.
      expect(r.assemblies).toBe(4);
      expect(r.recalls).toBe(3);
      expect(r.hitRate).toBe(1);
      expect(r.truncationShare).toBeGreaterThan(0);
      expect(r.p95Ms).toBeGreaterThanOrEqual(r.p50Ms);
      expect(r.p50Ms).toBeGreaterThan(0);
      const shares = r.composition.reduce((a, c) => a + c.share, 0);
      expect(shares).toBeCloseTo(1, 10);
      expect(r.composition.map((c) => c.sourceType)).toContain('TURN');
      expect(r.hitsByPath.find((p) => p.path === 'dense')!.hits).toBeGreaterThan(0);

      const empty = await gql<{ memoryMetricsReport: { assemblies: number; hitRate: number } }>(
        REPORT,
        { from: '2000-01-01T00:00:00Z', to: '2000-01-02T00:00:00Z' },
        admin,
      );
      expect(empty.memoryMetricsReport).toMatchObject({ assemblies: 0, hitRate: 0 });
      const backwards = await t.gql(
        REPORT,
        { from: '2001-01-01T00:00:00Z', to: '2000-01-01T00:00:00Z' },
        admin,
      );
      expect(backwards.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'to',
      });
    });

    it('records degradation: full-text search down leaves dense search, marked in the row', async () => {
      const lexical = jest
        .spyOn(t.app.get(SearchStatsRepository), 'lexemeStats')
        .mockRejectedValue(new Error('text search configuration is missing'));
      try {
        const res = await gql<{ context: { items: unknown[] } }>(
          CONTEXT,
          { c: conversationId, q: 'the navy ship he served on' },
          owner,
        );
        expect(res.context.items.length).toBeGreaterThan(0);
      } finally {
        lexical.mockRestore();
      }
      const [row] = await t.app.get(DataSource).query(
        `SELECT degraded, failed_stage, hits_dense, hits_lexical FROM retrieval_metrics
            WHERE operation = 'CONTEXT' ORDER BY created_at DESC LIMIT 1`,
      );
      expect(row).toMatchObject({
        degraded: ['lexical'],
        failed_stage: 'lexical',
        hits_lexical: 0,
      });
      expect(row.hits_dense).toBeGreaterThan(0);
      const { memoryMetricsReport: r } = await gql<{
        memoryMetricsReport: { degradedShare: number };
      }>(REPORT, { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' }, admin);
      expect(r.degradedShare).toBeGreaterThan(0);
    });
  });
});
