import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { SummaryPeriodName } from '../llm/language-model.js';

/**
 * A member's look back on a week, month or year of their conversations in one legacy. Its
 * vector lives in `embeddings` (kind `period`). Private to the member, like the conversations
 * it is built from.
 */
@Entity('period_summaries')
export class PeriodSummaryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'legacy_id', type: 'uuid' })
  legacyId: string;

  @Column({ type: 'text' })
  period: SummaryPeriodName;

  /** Local dates (YYYY-MM-DD) in `timeZone`, both included. */
  @Column({ name: 'period_start', type: 'date' })
  start: string;

  @Column({ name: 'period_end', type: 'date' })
  end: string;

  @Column({ name: 'time_zone', type: 'text' })
  timeZone: string;

  @Column({ name: 'starts_at', type: 'timestamptz' })
  startsAt: Date;

  /** Exclusive. */
  @Column({ name: 'ends_at', type: 'timestamptz' })
  endsAt: Date;

  @Column({ type: 'text' })
  summary: string;

  @Column({ name: 'emotional_tone', type: 'text', nullable: true })
  emotionalTone: string | null;

  @Column({ name: 'key_themes', type: 'text', array: true })
  keyThemes: string[];

  @Column({ name: 'recurring_patterns', type: 'text', array: true })
  recurringPatterns: string[];

  @Column({ type: 'text', array: true })
  people: string[];

  @Column({ type: 'text', array: true })
  places: string[];

  @Column({ name: 'conversation_count', type: 'integer' })
  conversationCount: number;

  @Column({ name: 'turn_count', type: 'integer' })
  turnCount: number;

  /** Provenance: the conversation summaries (weeks) or shorter periods (months, years) used. */
  @Column({ name: 'source_chunk_ids', type: 'uuid', array: true })
  sourceChunkIds: string[];

  @Column({ name: 'source_period_ids', type: 'uuid', array: true })
  sourcePeriodIds: string[];

  /** Every conversation with a turn in the period: deleting one marks this stale. */
  @Column({ name: 'conversation_ids', type: 'uuid', array: true })
  conversationIds: string[];

  /** What it was built from; the same fingerprint means rebuilding would change nothing. */
  @Column({ name: 'source_fingerprint', type: 'text' })
  sourceFingerprint: string;

  /** Assembled by heuristics from what is stored, not written by a language model. */
  @Column({ type: 'boolean' })
  aggregated: boolean;

  @Column({ type: 'text' })
  model: string;

  @Column({ name: 'prompt_version', type: 'text', nullable: true })
  promptVersion: string | null;

  @Column({ type: 'boolean' })
  stale: boolean;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
