import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RetrievalOperation } from './retrieval-metric.entity.js';
import { affected, run, sql } from '../database/sql.js';

export interface MetricRow {
  operation: RetrievalOperation;
  userId: string | null;
  legacyId: string | null;
  conversationId: string | null;
  hybrid: boolean;
  fusion: string;
  hits: { dense: number; lexical: number; trigram: number; time: number };
  bySource: { segment: number; summary: number; fact: number; memory: number };
  goodHits: number;
  fallback: boolean;
  widened: boolean;
  widenReason: string | null;
  timeFiltered: boolean;
  degraded: string[];
  failedStage: string | null;
  items: number;
  itemsBySource: Record<string, number>;
  tokens: number;
  budget: number;
  truncated: boolean;
  embedMs: number;
  searchMs: number;
  totalMs: number;
  queryTokens: number;
  queryText: string | null;
  pathMs: { dense: number; lexical: number; trigram: number; fusion: number };
  topSimilarities: number[];
  memoryHoldout: boolean;
  forgotComplaint: boolean;
}

export interface MetricsAggregate {
  assemblies: number;
  recalls: number;
  hitRate: number;
  fallbackShare: number;
  wideningShare: number;
  truncationShare: number;
  degradedShare: number;
  failureShare: number;
  p50Ms: number;
  p95Ms: number;
  embedP50Ms: number;
  embedP95Ms: number;
  searchP50Ms: number;
  searchP95Ms: number;
  recallP50Ms: number;
  recallP95Ms: number;
  meanTokens: number;
  hitsByPath: { dense: number; lexical: number; trigram: number; time: number };
  composition: { source: string; items: number }[];
  fewFullTextShare: number;
  summariesOnlyShare: number;
  complaints: number;
  holdoutShare: number;
  denseP95Ms: number;
  lexicalP95Ms: number;
  trigramP95Ms: number;
  fusionP95Ms: number;
  meanTopSimilarity: number;
}

/** Language-model tokens of a period: summaries' and all tasks' (embeddings left out). */
export interface ModelSpend {
  summaryTokens: number;
  modelTokens: number;
}

/** The sources a summaries-only context is made of. */
const SUMMARY_SOURCES = ['SUMMARY', 'PERIOD_SUMMARY'];

@Injectable()
export class MetricsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The row, and its query text (SEARCH_METRICS_TEXT) beside it, in one statement. */
  async insert(row: MetricRow): Promise<void> {
    await run(
      this.dataSource,
      sql`WITH m AS (
         INSERT INTO retrieval_metrics (operation, user_id, legacy_id, conversation_id, hybrid,
           fusion, hits_dense, hits_lexical, hits_trigram, hits_time, hits_segment, hits_summary,
           hits_fact, hits_memory, good_hits, fallback, widened, widen_reason, time_filtered,
           degraded, failed_stage, items, items_by_source, tokens, budget, truncated, embed_ms,
           search_ms, total_ms, query_tokens, dense_ms, lexical_ms, trigram_ms, fusion_ms,
           top_similarities, memory_holdout, forgot_complaint)
         VALUES (${row.operation}, ${row.userId}, ${row.legacyId}, ${row.conversationId},
           ${row.hybrid}, ${row.fusion}, ${row.hits.dense}, ${row.hits.lexical}, ${row.hits.trigram},
           ${row.hits.time}, ${row.bySource.segment}, ${row.bySource.summary}, ${row.bySource.fact},
           ${row.bySource.memory}, ${row.goodHits}, ${row.fallback}, ${row.widened},
           ${row.widenReason},
                 ${row.timeFiltered}, ${row.degraded}, ${row.failedStage}, ${row.items},
                   ${JSON.stringify(row.itemsBySource)}, ${row.tokens}, ${row.budget},
                   ${row.truncated}, ${row.embedMs}, ${row.searchMs}, ${row.totalMs},
                   ${row.queryTokens}, ${row.pathMs.dense}, ${row.pathMs.lexical},
                   ${row.pathMs.trigram}, ${row.pathMs.fusion},
                 ${row.topSimilarities}, ${row.memoryHoldout}, ${row.forgotComplaint})
         RETURNING id, conversation_id)
       INSERT INTO retrieval_metric_texts (metric_id, conversation_id, query_text)
       SELECT id, conversation_id, ${row.queryText}::text FROM m WHERE ${row.queryText}::text IS NOT NULL`,
    );
  }

  /** Retention: deletes the rows (and their texts) recorded before `before`. */
  async deleteBefore(before: Date): Promise<number> {
    return affected(
      this.dataSource,
      sql`DELETE FROM retrieval_metrics WHERE created_at < ${before}`,
    );
  }

  /**
   * Figures over [from, to): context assemblies (replies and the `context` query) for the
   * shares and latencies, recalls counted and timed apart. Debug runs are left out.
   */
  async aggregate(from: Date, to: Date, fullTextMinHits = 3): Promise<MetricsAggregate> {
    const [row]: Record<string, string | number | null>[] = await run(
      this.dataSource,
      sql`WITH a AS (
         SELECT * FROM retrieval_metrics
          WHERE created_at >= ${from} AND created_at < ${to} AND operation IN ('REPLY', 'CONTEXT')
       ), r AS (
         SELECT total_ms FROM retrieval_metrics
          WHERE created_at >= ${from} AND created_at < ${to} AND operation = 'RECALL'
       )
       SELECT (SELECT count(*) FROM a) AS assemblies,
              (SELECT count(*) FROM r) AS recalls,
              coalesce((SELECT avg((items > 0)::int) FROM a), 0) AS "hitRate",
              coalesce((SELECT avg(fallback::int) FROM a), 0) AS "fallbackShare",
              coalesce((SELECT avg(widened::int) FROM a), 0) AS "wideningShare",
              coalesce((SELECT avg(truncated::int) FROM a), 0) AS "truncationShare",
              coalesce((SELECT avg((cardinality(degraded) > 0)::int) FROM a), 0) AS "degradedShare",
              coalesce((SELECT avg((failed_stage IS NOT NULL)::int) FROM a), 0) AS "failureShare",
              coalesce((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total_ms) FROM a), 0) AS "p50Ms",
              coalesce((SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY total_ms) FROM a), 0) AS "p95Ms",
              coalesce((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY embed_ms) FROM a), 0) AS "embedP50Ms",
              coalesce((SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY embed_ms) FROM a), 0) AS "embedP95Ms",
              coalesce((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY search_ms) FROM a), 0) AS "searchP50Ms",
              coalesce((SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY search_ms) FROM a), 0) AS "searchP95Ms",
              coalesce((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total_ms) FROM r), 0) AS "recallP50Ms",
              coalesce((SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY total_ms) FROM r), 0) AS "recallP95Ms",
              coalesce((SELECT avg(tokens) FROM a), 0) AS "meanTokens",
              coalesce((SELECT avg((hits_lexical < ${fullTextMinHits})::int) FROM a), 0) AS "fewFullTextShare",
              coalesce((SELECT avg((items > 0 AND NOT EXISTS (
                          SELECT 1 FROM jsonb_each_text(a.items_by_source) e
                           WHERE e.value::int > 0 AND e.key <> ALL(${SUMMARY_SOURCES}::text[])))::int) FROM a), 0)
                AS "summariesOnlyShare",
              (SELECT count(*) FROM a WHERE forgot_complaint) AS complaints,
              coalesce((SELECT avg(memory_holdout::int) FROM a), 0) AS "holdoutShare",
              coalesce((SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY dense_ms) FROM a), 0) AS "denseP95Ms",
              coalesce((SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY lexical_ms) FROM a), 0) AS "lexicalP95Ms",
              coalesce((SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY trigram_ms) FROM a), 0) AS "trigramP95Ms",
              coalesce((SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY fusion_ms) FROM a), 0) AS "fusionP95Ms",
              coalesce((SELECT avg(top_similarities[1]) FROM a
                         WHERE cardinality(top_similarities) > 0), 0) AS "meanTopSimilarity",
              coalesce((SELECT sum(hits_dense) FROM a), 0) AS "hitsDense",
              coalesce((SELECT sum(hits_lexical) FROM a), 0) AS "hitsLexical",
              coalesce((SELECT sum(hits_trigram) FROM a), 0) AS "hitsTrigram",
              coalesce((SELECT sum(hits_time) FROM a), 0) AS "hitsTime",
              (SELECT json_agg(json_build_object('source', key, 'items', n) ORDER BY key)
                 FROM (SELECT e.key, sum(e.value::int) AS n
                         FROM a CROSS JOIN LATERAL jsonb_each_text(a.items_by_source) AS e
                        GROUP BY e.key) c) AS composition`,
    );
    const n = (k: string) => Number(row[k] ?? 0);
    return {
      assemblies: n('assemblies'),
      recalls: n('recalls'),
      hitRate: n('hitRate'),
      fallbackShare: n('fallbackShare'),
      wideningShare: n('wideningShare'),
      truncationShare: n('truncationShare'),
      degradedShare: n('degradedShare'),
      failureShare: n('failureShare'),
      p50Ms: n('p50Ms'),
      p95Ms: n('p95Ms'),
      embedP50Ms: n('embedP50Ms'),
      embedP95Ms: n('embedP95Ms'),
      searchP50Ms: n('searchP50Ms'),
      searchP95Ms: n('searchP95Ms'),
      recallP50Ms: n('recallP50Ms'),
      recallP95Ms: n('recallP95Ms'),
      meanTokens: n('meanTokens'),
      hitsByPath: {
        dense: n('hitsDense'),
        lexical: n('hitsLexical'),
        trigram: n('hitsTrigram'),
        time: n('hitsTime'),
      },
      fewFullTextShare: n('fewFullTextShare'),
      summariesOnlyShare: n('summariesOnlyShare'),
      complaints: n('complaints'),
      holdoutShare: n('holdoutShare'),
      denseP95Ms: n('denseP95Ms'),
      lexicalP95Ms: n('lexicalP95Ms'),
      trigramP95Ms: n('trigramP95Ms'),
      fusionP95Ms: n('fusionP95Ms'),
      meanTopSimilarity: n('meanTopSimilarity'),
      composition: ((row.composition as unknown as { source: string; items: number }[]) ?? []).map(
        (c) => ({ source: c.source, items: Number(c.items) }),
      ),
    };
  }

  /** Model spend over [from, to), in tokens: what summaries cost against every language task. */
  async modelSpend(from: Date, to: Date): Promise<ModelSpend> {
    const [row]: { summary: string | null; total: string | null }[] = await run(
      this.dataSource,
      sql`SELECT sum(prompt_tokens + completion_tokens)
                FILTER (WHERE task IN ('summarizeTurns', 'summarizePeriod')) AS summary,
              sum(prompt_tokens + completion_tokens) AS total
         FROM model_calls
        WHERE created_at >= ${from} AND created_at < ${to} AND task <> 'embed'`,
    );
    return { summaryTokens: Number(row.summary ?? 0), modelTokens: Number(row.total ?? 0) };
  }
}
