import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { StructuredSummary } from '../llm/language-model.js';

/** The summary of a range of one conversation's turns. Its vector lives in `embeddings`. */
@Entity('conversation_chunks')
export class ConversationChunkEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'conversation_id', type: 'uuid' })
  conversationId: string;

  @Column({ name: 'legacy_id', type: 'uuid' })
  legacyId: string;

  /** The conversation's owner. */
  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  /** First turn index summarized. */
  @Column({ name: 'range_start', type: 'integer' })
  rangeStart: number;

  /** Last turn index summarized (inclusive). */
  @Column({ name: 'range_end', type: 'integer' })
  rangeEnd: number;

  /** The summary: 2 to 4 sentences, key topics and emotional tone. */
  @Column({ type: 'text' })
  content: string;

  @Column({ type: 'jsonb' })
  structured: StructuredSummary;

  @Column({ name: 'turn_count', type: 'integer' })
  turnCount: number;

  @Column({ name: 'token_count', type: 'integer' })
  tokenCount: number;

  /** The language model that wrote it. */
  @Column({ type: 'text' })
  model: string;

  @Column({ name: 'prompt_version', type: 'text', nullable: true })
  promptVersion: string | null;

  @Column({ name: 'first_occurred_at', type: 'timestamptz' })
  firstOccurredAt: Date;

  @Column({ name: 'last_occurred_at', type: 'timestamptz' })
  lastOccurredAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Read with the chunk: it covers a reply made for its starter alone (not a column). */
  answeredAlone?: boolean;
}
