/**
 * The upgrade triggers: measurements that say when the simple design (PostgreSQL full text,
 * pgvector, summaries in a fixed token budget) no longer serves and which part to upgrade.
 * Each compares the period's value with a configurable threshold; a share only fires on enough
 * assemblies to mean something.
 */
export type UpgradeTriggerName =
  | 'FEW_FULL_TEXT_HITS'
  | 'FALLBACK'
  | 'SUMMARIES_ONLY'
  | 'TRUNCATION'
  | 'P95_LATENCY'
  | 'SUMMARY_SPEND'
  | 'FORGOT_COMPLAINTS';

export interface TriggerThresholds {
  fullTextMinHits: number;
  fewFullTextShare: number;
  fallbackShare: number;
  summariesOnlyShare: number;
  truncationShare: number;
  p95LatencyMs: number;
  summarySpendShare: number;
  forgotPerWeek: number;
  minAssemblies: number;
}

/** What the period measured (shares over context assemblies). */
export interface TriggerInputs {
  assemblies: number;
  fewFullTextShare: number;
  fallbackShare: number;
  summariesOnlyShare: number;
  truncationShare: number;
  p95Ms: number;
  /** Language-model tokens spent on summaries, and on everything (embeddings excluded). */
  summaryTokens: number;
  modelTokens: number;
  complaints: number;
  periodDays: number;
}

export interface TriggerEvaluation {
  name: UpgradeTriggerName;
  value: number;
  threshold: number;
  fires: boolean;
  /** Enough data to judge (assemblies, model tokens, or always for counts). */
  enoughData: boolean;
  variable: string;
  description: string;
  suggestion: string;
}

/** Weeks in the period, at least one: a shorter period is held to a week's allowance. */
export function periodWeeks(periodDays: number): number {
  return Math.max(1, periodDays / 7);
}

export function evaluateTriggers(i: TriggerInputs, t: TriggerThresholds): TriggerEvaluation[] {
  const enoughAssemblies = i.assemblies >= t.minAssemblies;
  const share = (
    name: UpgradeTriggerName,
    value: number,
    threshold: number,
    variable: string,
    description: string,
    suggestion: string,
    enoughData = enoughAssemblies,
  ): TriggerEvaluation => ({
    name,
    value,
    threshold,
    fires: enoughData && value > threshold,
    enoughData,
    variable,
    description,
    suggestion,
  });
  return [
    share(
      'FEW_FULL_TEXT_HITS',
      i.fewFullTextShare,
      t.fewFullTextShare,
      'TRIGGER_FEW_FULL_TEXT_SHARE',
      `Share of queries with fewer than ${t.fullTextMinHits} full-text hits.`,
      'Full-text search sees too little: add a tokenizer for the languages in use (CJK segmentation) or lean on dense retrieval.',
    ),
    share(
      'FALLBACK',
      i.fallbackShare,
      t.fallbackShare,
      'TRIGGER_FALLBACK_SHARE',
      'Share of queries that needed the trigram fallback.',
      'Trigrams carry the lexical path: add proper tokenization or a dedicated search engine.',
    ),
    share(
      'SUMMARIES_ONLY',
      i.summariesOnlyShare,
      t.summariesOnlyShare,
      'TRIGGER_SUMMARIES_ONLY_SHARE',
      'Share of contexts whose retrieved items were all summaries.',
      'Details are lost to summaries: retrieve finer turns or passages, or keep more facts and memories.',
    ),
    share(
      'TRUNCATION',
      i.truncationShare,
      t.truncationShare,
      'TRIGGER_TRUNCATION_SHARE',
      'Share of contexts that left a candidate out for lack of token budget.',
      'The budget is too small for what retrieval finds: raise CONTEXT_TOKEN_BUDGET or add a reranker.',
    ),
    share(
      'P95_LATENCY',
      i.p95Ms,
      t.p95LatencyMs,
      'TRIGGER_P95_LATENCY_MS',
      '95th percentile of context assembly time, in ms (per-path times in denseP95Ms, lexicalP95Ms, fusionP95Ms).',
      'Retrieval is slow: tune or move the vector index, add read replicas, or a dedicated search service.',
    ),
    share(
      'SUMMARY_SPEND',
      i.modelTokens > 0 ? i.summaryTokens / i.modelTokens : 0,
      t.summarySpendShare,
      'TRIGGER_SUMMARY_SPEND_SHARE',
      'Share of language-model tokens spent on conversation and period summaries.',
      'Summaries cost too much: use a smaller model for them, or summarize less often.',
      i.modelTokens > 0,
    ),
    share(
      'FORGOT_COMPLAINTS',
      i.complaints / periodWeeks(i.periodDays),
      t.forgotPerWeek,
      'TRIGGER_FORGOT_PER_WEEK',
      '"You forgot" complaints in user turns per week ("you forgot", "I already told you", 我说过).',
      'Users notice what is forgotten: inspect those conversations with retrievalDebug, and memory extraction.',
      true,
    ),
  ];
}
