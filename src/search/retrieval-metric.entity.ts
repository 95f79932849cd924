import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type RetrievalOperation = 'REPLY' | 'CONTEXT' | 'RECALL' | 'DEBUG';

/** One context assembly or recall: what each path found and how long it took. No text. */
@Entity('retrieval_metrics')
export class RetrievalMetricEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'text' })
  operation: RetrievalOperation;

  @Column({ name: 'user_id', type: 'uuid', nullable: true })
  userId: string | null;

  @Column({ name: 'legacy_id', type: 'uuid', nullable: true })
  legacyId: string | null;

  @Column({ name: 'conversation_id', type: 'uuid', nullable: true })
  conversationId: string | null;

  @Column({ type: 'boolean' })
  hybrid: boolean;

  @Column({ type: 'text' })
  fusion: string;

  @Column({ name: 'hits_dense', type: 'integer' })
  hitsDense: number;

  @Column({ name: 'hits_lexical', type: 'integer' })
  hitsLexical: number;

  @Column({ name: 'hits_trigram', type: 'integer' })
  hitsTrigram: number;

  @Column({ name: 'hits_time', type: 'integer' })
  hitsTime: number;

  @Column({ name: 'hits_segment', type: 'integer' })
  hitsSegment: number;

  @Column({ name: 'hits_summary', type: 'integer' })
  hitsSummary: number;

  @Column({ name: 'hits_fact', type: 'integer' })
  hitsFact: number;

  @Column({ name: 'hits_memory', type: 'integer' })
  hitsMemory: number;

  @Column({ name: 'good_hits', type: 'integer' })
  goodHits: number;

  @Column({ type: 'boolean' })
  fallback: boolean;

  @Column({ type: 'boolean' })
  widened: boolean;

  @Column({ name: 'widen_reason', type: 'text', nullable: true })
  widenReason: string | null;

  @Column({ name: 'time_filtered', type: 'boolean' })
  timeFiltered: boolean;

  @Column({ type: 'text', array: true })
  degraded: string[];

  @Column({ name: 'failed_stage', type: 'text', nullable: true })
  failedStage: string | null;

  @Column({ type: 'integer' })
  items: number;

  @Column({ name: 'items_by_source', type: 'jsonb' })
  itemsBySource: Record<string, number>;

  @Column({ type: 'integer' })
  tokens: number;

  @Column({ type: 'integer' })
  budget: number;

  @Column({ type: 'boolean' })
  truncated: boolean;

  @Column({ name: 'embed_ms', type: 'real' })
  embedMs: number;

  @Column({ name: 'search_ms', type: 'real' })
  searchMs: number;

  @Column({ name: 'total_ms', type: 'real' })
  totalMs: number;

  @Column({ name: 'query_tokens', type: 'integer' })
  queryTokens: number;

  @Column({ name: 'dense_ms', type: 'real', default: 0 })
  denseMs: number;

  /** Full-text path, its word statistics included. */
  @Column({ name: 'lexical_ms', type: 'real', default: 0 })
  lexicalMs: number;

  @Column({ name: 'trigram_ms', type: 'real', default: 0 })
  trigramMs: number;

  @Column({ name: 'fusion_ms', type: 'real', default: 0 })
  fusionMs: number;

  /** The best dense similarities among the candidates, best first. */
  @Column({ name: 'top_similarities', type: 'real', array: true, default: () => "'{}'" })
  topSimilarities: number[];

  @Column({ name: 'memory_holdout', type: 'boolean', default: false })
  memoryHoldout: boolean;

  /** The query (the user's turn) is a "you forgot" complaint. */
  @Column({ name: 'forgot_complaint', type: 'boolean', default: false })
  forgotComplaint: boolean;
}
