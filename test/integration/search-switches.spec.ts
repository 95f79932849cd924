import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { EmbeddingService } from '../../src/embeddings/embedding.service.js';
import { HybridSearchService } from '../../src/search/hybrid-search.service.js';
import { SearchStatsRepository } from '../../src/search/search-stats.repository.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * The off positions of the search switches, set by configuration as an operator would: hybrid
 * off, chunking off, reciprocal rank fusion, time expressions off, a smaller budget, no
 * summaries section, no neighbour weight, and query text kept in metrics (debug setting).
 */
const LONG = Array.from(
  { length: 40 },
  (_, i) =>
    `Paragraph ${i}: the orchard behind the farmhouse had apple trees, pear trees and a plum tree that Grandpa Joe pruned every March.`,
).join('\n\n');

const DEBUG = `query($c: ID!, $q: String!) {
  retrievalDebug(conversationId: $c, query: $q) {
    fusion hybrid timeExpression budget tokenCount
    candidates { sourceType kept paths { path } scores { name value } }
  }
}`;
const CONTEXT = `query($c: ID!, $q: String!) {
  context(conversationId: $c, query: $q) { budget tokenCount sections { name } items { sourceType } }
}`;

describe('Search switches, set by configuration', () => {
  let t: TestApp;
  let owner: TestUser;
  let conversationId: string;

  async function gql<T>(query: string, vars: Record<string, unknown>): Promise<T> {
    const res = await t.gql<T>(query, vars, owner);
    expect(res.errors).toBeUndefined();
    return res.data!;
  }

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      CONTEXT_RECENT_TURNS: '2',
      SEARCH_HYBRID: 'off',
      SEARCH_CHUNKING: 'off',
      SEARCH_FUSION: 'rrf',
      SEARCH_TIME: 'off',
      CONTEXT_TOKEN_BUDGET: '300',
      SEARCH_CONTEXT_SUMMARIES: '0',
      SEARCH_WEIGHT_NEIGHBOR: '0',
      SEARCH_WEIGHT_SUMMARY: '1',
      SEARCH_WEIGHT_SPEAKER: '0',
      SEARCH_QUESTION_PENALTY: '0',
      SEARCH_AGENT_PENALTY: '0',
      SEARCH_METRICS_TEXT: 'true',
    });
    owner = await t.user('switches-owner', { email: 'switches@example.com' });
    const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }',
      {},
    );
    const turns = [
      LONG,
      'He drove a red tractor to the market on Saturdays.',
      'His dog Biscuit rode in the cab with him.',
      'Tell me about something else.',
      'OK.',
    ];
    const { importConversation } = await gql<{
      importConversation: { conversation: { id: string } };
    }>(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { conversation { id } } }`,
      {
        input: {
          legacyId: createLegacy.id,
          messages: turns.map((content, i) => ({
            role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
            content,
            occurredAt: new Date(Date.UTC(2024, 0, 1 + i)).toISOString(),
          })),
        },
      },
    );
    conversationId = importConversation.conversation.id;
    await t.app.get(JobsService).drain({ timeoutMs: 60_000 });
  });
  afterAll(() => t.close());

  it('reads every switch from configuration', () => {
    expect(t.app.get(HybridSearchService).settings()).toMatchObject({
      hybrid: false,
      fusion: 'rrf',
      time: 'off',
      weights: { neighbor: 0 },
    });
  });

  it('chunking off: a long turn is one segment', async () => {
    const rows = await t.app.get(DataSource).query(
      `SELECT turn_index, count(*)::int AS n, max(token_count) AS tokens FROM message_segments
        WHERE conversation_id = $1 GROUP BY turn_index ORDER BY turn_index`,
      [conversationId],
    );
    expect(rows[0].n).toBe(1);
    expect(rows[0].tokens).toBeGreaterThan(500);
    expect(rows.every((r: { n: number }) => r.n === 1)).toBe(true);
  });

  it('hybrid off, rrf, time off, no turn adjustments: vector ranks only', async () => {
    const { retrievalDebug: d } = await gql<{
      retrievalDebug: {
        fusion: string;
        hybrid: boolean;
        timeExpression: string | null;
        candidates: { paths: { path: string }[]; scores: { name: string; value: number }[] }[];
      };
    }>(DEBUG, { c: conversationId, q: 'What did the tractor carry last week?' });
    expect(d).toMatchObject({ fusion: 'RRF', hybrid: false, timeExpression: 'last week' });
    expect(d.candidates.length).toBeGreaterThan(0);
    const score = (c: (typeof d.candidates)[number], name: string) =>
      c.scores.find((s) => s.name === name)!.value;
    for (const c of d.candidates.filter((x) => x.paths.length > 0)) {
      expect(c.paths.map((p) => p.path)).toEqual(['DENSE']);
      expect(score(c, 'rrf')).toBeGreaterThan(0);
      expect(score(c, 'time')).toBe(0);
      expect(score(c, 'final')).toBeCloseTo(score(c, 'rrf'), 12);
    }
  });

  it('budget and sections: a 300-token budget and no summaries section', async () => {
    const { context } = await gql<{
      context: { budget: number; tokenCount: number; sections: { name: string }[] };
    }>(CONTEXT, { c: conversationId, q: 'the red tractor and the dog' });
    expect(context.budget).toBe(300);
    expect(context.tokenCount).toBeLessThanOrEqual(300);
    expect(context.sections.map((s) => s.name)).not.toContain('SUMMARIES');
    expect(context.sections.map((s) => s.name)).toContain('TURNS');
  });

  it('keeps the query text in metrics with the debug setting on', async () => {
    const [row] = await t.app.get(DataSource).query(
      `SELECT t.query_text, m.hybrid, m.fusion
           FROM retrieval_metrics m JOIN retrieval_metric_texts t ON t.metric_id = m.id
          ORDER BY m.created_at DESC LIMIT 1`,
    );
    expect(row).toEqual({
      query_text: 'the red tractor and the dog',
      hybrid: false,
      fusion: 'rrf',
    });
  });

  it('records degradation in the metrics: embedding model down, then full-text search down', async () => {
    const latest = async () =>
      (
        await t.app
          .get(DataSource)
          .query(
            `SELECT degraded, failed_stage, hits_dense, hits_lexical FROM retrieval_metrics ORDER BY created_at DESC LIMIT 1`,
          )
      )[0];
    const embed = jest.spyOn(t.app.get(EmbeddingService), 'embedQuery').mockResolvedValue(null);
    try {
      const { context } = await gql<{ context: { items: { sourceType: string }[] } }>(CONTEXT, {
        c: conversationId,
        q: 'the red tractor',
      });
      // Hybrid is off here, yet with no query vector the search falls back to words.
      expect(context.items.length).toBeGreaterThan(0);
    } finally {
      embed.mockRestore();
    }
    expect(await latest()).toMatchObject({ degraded: ['dense'], hits_dense: 0 });
    expect((await latest()).hits_lexical).toBeGreaterThan(0);

    const lexical = jest
      .spyOn(t.app.get(SearchStatsRepository), 'lexemeStats')
      .mockRejectedValue(new Error('text search configuration is missing'));
    try {
      await gql(CONTEXT, { c: conversationId, q: 'the red tractor' });
    } finally {
      lexical.mockRestore();
    }
    // Hybrid off searches by meaning only, so lexical search never ran: nothing degraded.
    expect(await latest()).toMatchObject({ degraded: [], failed_stage: null });
  });

  it('a failing search costs its sections, not the context, and is recorded', async () => {
    const spy = jest
      .spyOn(t.app.get(HybridSearchService), 'search')
      .mockRejectedValue(new Error('search is down'));
    try {
      const { context } = await gql<{ context: { items: unknown[]; sections: unknown[] } }>(
        CONTEXT,
        {
          c: conversationId,
          q: 'tractor',
        },
      );
      expect(context.items).toEqual([]);
    } finally {
      spy.mockRestore();
    }
    const [row] = await t.app
      .get(DataSource)
      .query(`SELECT failed_stage, items FROM retrieval_metrics ORDER BY created_at DESC LIMIT 1`);
    expect(row).toEqual({ failed_stage: 'search', items: 0 });
  });
});
