import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import {
  FactAction,
  FactCategory,
  FactSourceKind,
  FactStatus,
  FactVisibility,
} from './fact.enums.js';

/** A fact about a legacy, owned by the member who stated it. Its vector lives in `embeddings`. */
@Entity('facts')
export class FactEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'legacy_id', type: 'uuid' })
  legacyId: string;

  @Column({ name: 'author_id', type: 'uuid' })
  authorId: string;

  @Column({ type: 'text' })
  category: FactCategory;

  /** One sentence. */
  @Column({ type: 'text' })
  content: string;

  /** `content` lower-cased without punctuation: equal texts are the same fact. */
  @Column({ type: 'text' })
  normalized: string;

  @Column({ type: 'text', default: FactVisibility.PRIVATE })
  visibility: FactVisibility;

  @Column({ type: 'text', default: FactStatus.ACTIVE })
  status: FactStatus;

  @Column({ type: 'real' })
  confidence: number;

  /** What other members see of it: its value at the last change they could see (a trigger's). */
  @Column({ name: 'shared_confidence', type: 'real' })
  sharedConfidence: number;

  /** How many times it was said (its sources). */
  @Column({ name: 'mention_count', type: 'integer', default: 1 })
  mentionCount: number;

  /** What other members see of the count: its value when the author last shared the fact. */
  @Column({ name: 'shared_mention_count', type: 'integer', default: 0 })
  sharedMentionCount: number;

  /** Where it was first said; null for facts written by hand or once that conversation is gone. */
  @Column({ name: 'source_conversation_id', type: 'uuid', nullable: true })
  sourceConversationId: string | null;

  @Column({ name: 'source_range_start', type: 'integer', nullable: true })
  sourceRangeStart: number | null;

  @Column({ name: 'source_range_end', type: 'integer', nullable: true })
  sourceRangeEnd: number | null;

  @Column({ name: 'source_message_ids', type: 'uuid', array: true, default: () => "'{}'" })
  sourceMessageIds: string[];

  /** When it was said (the source turn's time), or written by hand. */
  @Column({ name: 'valid_from', type: 'timestamptz' })
  validFrom: Date;

  /** When a newer fact superseded it. */
  @Column({ name: 'valid_to', type: 'timestamptz', nullable: true })
  validTo: Date | null;

  @Column({ name: 'superseded_by', type: 'uuid', nullable: true })
  supersededBy: string | null;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  @Column({ name: 'deleted_by', type: 'uuid', nullable: true })
  deletedBy: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** When other members last saw it change (a trigger keeps it, as `sharedConfidence`). */
  @Column({ name: 'shared_updated_at', type: 'timestamptz' })
  sharedUpdatedAt: Date;
}

/** One mention of a fact: a summarized range of a conversation, or a hand-written addFact. */
@Entity('fact_sources')
export class FactSourceEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'fact_id', type: 'uuid' })
  factId: string;

  @Column({ type: 'text' })
  kind: FactSourceKind;

  @Column({ name: 'conversation_id', type: 'uuid', nullable: true })
  conversationId: string | null;

  @Column({ name: 'chunk_id', type: 'uuid', nullable: true })
  chunkId: string | null;

  @Column({ name: 'range_start', type: 'integer', nullable: true })
  rangeStart: number | null;

  @Column({ name: 'range_end', type: 'integer', nullable: true })
  rangeEnd: number | null;

  @Column({ name: 'message_ids', type: 'uuid', array: true, default: () => "'{}'" })
  messageIds: string[];

  @Column({ name: 'added_by', type: 'uuid', nullable: true })
  addedBy: string | null;

  @Column({ name: 'story_id', type: 'uuid', nullable: true })
  storyId: string | null;

  @Column({ name: 'story_chunk_id', type: 'uuid', nullable: true })
  storyChunkId: string | null;

  @Column({ type: 'integer', nullable: true })
  page: number | null;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** A fact as it stood after one change. */
@Entity('fact_history')
export class FactHistoryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'fact_id', type: 'uuid' })
  factId: string;

  @Column({ type: 'text' })
  action: FactAction;

  /** Who did it; null when Keepsake did (summarization). */
  @Column({ name: 'actor_id', type: 'uuid', nullable: true })
  actorId: string | null;

  @Column({ type: 'text' })
  content: string;

  @Column({ type: 'text' })
  category: FactCategory;

  @Column({ type: 'text' })
  visibility: FactVisibility;

  @Column({ type: 'text' })
  status: FactStatus;

  @Column({ name: 'mention_count', type: 'integer' })
  mentionCount: number;

  @Column({ name: 'shared_mention_count', type: 'integer', default: 0 })
  sharedMentionCount: number;

  /** The fact that superseded this one, or that this one superseded. */
  @Column({ name: 'related_fact_id', type: 'uuid', nullable: true })
  relatedFactId: string | null;

  @Column({ name: 'conversation_id', type: 'uuid', nullable: true })
  conversationId: string | null;

  @Column({ type: 'text', nullable: true })
  detail: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
