import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import {
  ArchiveReason,
  ConversationMode,
  MemoryHistoryAction,
  MemorySource,
  MemoryStatus,
  MemoryType,
} from './memory.enums.js';

/** One change in a memory's life, kept on the memory (and purged with it). */
export interface MemoryHistoryEntry {
  at: string;
  action: MemoryHistoryAction;
  /** Status before the change (FORGOTTEN, ARCHIVED, RESTORED, SUPERSEDED). */
  fromStatus?: MemoryStatus;
  /** The memory that replaced this one, or the one it replaced. */
  relatedMemoryId?: string;
  reason?: string;
  /** Extra facts about the change, such as an import's original ids. */
  details?: Record<string, unknown>;
}

// Indexes are created by the migration (partial, GIN, trigram); TypeORM must leave them alone.
@Index('memories_user_created_idx', { synchronize: false })
@Index('memories_user_scope_idx', { synchronize: false })
@Index('memories_user_normalized_idx', { synchronize: false })
@Index('memories_user_slot_idx', { synchronize: false })
@Index('memories_user_reference_idx', { synchronize: false })
@Index('memories_conversation_idx', { synchronize: false })
@Index('memories_source_message_idx', { synchronize: false })
@Index('memories_superseded_by_idx', { synchronize: false })
@Index('memories_purge_idx', { synchronize: false })
@Index('memories_retention_idx', { synchronize: false })
@Index('memories_search_tsv_idx', { synchronize: false })
@Index('memories_content_trgm_idx', { synchronize: false })
@Entity('memories')
export class MemoryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  /** Null: a global memory, used with every legacy. */
  @Column({ name: 'legacy_id', type: 'uuid', nullable: true })
  legacyId: string | null;

  @Column({ type: 'text' })
  type: MemoryType;

  @Column({ type: 'text' })
  content: string;

  /** Content folded for duplicate checks (case, punctuation, spacing). */
  @Column({ type: 'text' })
  normalized: string;

  /** A single-valued attribute the memory sets ("home", "name"), for contradiction checks. */
  @Column({ name: 'slot_key', type: 'text', nullable: true })
  slotKey: string | null;

  @Column({ name: 'slot_value', type: 'text', nullable: true })
  slotValue: string | null;

  @Column({ type: 'real' })
  confidence: number;

  @Column({ type: 'text' })
  source: MemorySource;

  @Column({ name: 'conversation_id', type: 'uuid', nullable: true })
  conversationId: string | null;

  @Column({ name: 'source_message_id', type: 'uuid', nullable: true })
  sourceMessageId: string | null;

  @Column({ name: 'source_turn_index', type: 'integer', nullable: true })
  sourceTurnIndex: number | null;

  @Column({ name: 'conversation_mode', type: 'text', nullable: true })
  conversationMode: ConversationMode | null;

  /** For imports: the memory's id in the system it came from. */
  @Column({ name: 'source_reference', type: 'text', nullable: true })
  sourceReference: string | null;

  @Column({ name: 'reference_count', type: 'integer', default: 0 })
  referenceCount: number;

  @Column({ name: 'last_referenced_at', type: 'timestamptz', nullable: true })
  lastReferencedAt: Date | null;

  @Column({ type: 'text', default: MemoryStatus.ACTIVE })
  status: MemoryStatus;

  @Column({ name: 'valid_from', type: 'timestamptz' })
  validFrom: Date;

  @Column({ name: 'valid_to', type: 'timestamptz', nullable: true })
  validTo: Date | null;

  @Column({ name: 'superseded_by', type: 'uuid', nullable: true })
  supersededBy: string | null;

  @Column({ name: 'archived_at', type: 'timestamptz', nullable: true })
  archivedAt: Date | null;

  @Column({ name: 'archive_reason', type: 'text', nullable: true })
  archiveReason: ArchiveReason | null;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  @Column({ type: 'jsonb', default: [] })
  history: MemoryHistoryEntry[];

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({
    name: 'search_tsv',
    type: 'tsvector',
    select: false,
    insert: false,
    update: false,
    generatedType: 'STORED',
    asExpression: `to_tsvector('simple', content)`,
  })
  searchTsv?: string;
}

/** One user turn examined by the extraction job: makes it idempotent and rate-limited. */
@Index('memory_extractions_user_started_idx', { synchronize: false })
@Entity('memory_extractions')
export class MemoryExtractionEntity {
  @Column({ name: 'source_message_id', type: 'uuid', primary: true })
  sourceMessageId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'conversation_id', type: 'uuid' })
  conversationId: string;

  @Column({ name: 'assistant_message_id', type: 'uuid', nullable: true })
  assistantMessageId: string | null;

  /**
   * Null while under way; NO_CONSENT when remember was off or memory paused at run time;
   * COMMAND for a memory command; CLEARED when the member cleared their memories after the turn.
   */
  @Column({ type: 'text', nullable: true })
  outcome: 'EXTRACTED' | 'NO_CONSENT' | 'COMMAND' | 'CLEARED' | null;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ type: 'text', nullable: true })
  model: string | null;

  @Column({ name: 'proposed_count', type: 'integer', default: 0 })
  proposedCount: number;

  @Column({ name: 'below_threshold_count', type: 'integer', default: 0 })
  belowThresholdCount: number;

  @Column({ name: 'created_count', type: 'integer', default: 0 })
  createdCount: number;

  @Column({ name: 'merged_count', type: 'integer', default: 0 })
  mergedCount: number;

  @Column({ name: 'superseded_count', type: 'integer', default: 0 })
  supersededCount: number;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;
}

/** A memory given to the model for an assistant turn. */
@Index('memory_uses_memory_idx', { synchronize: false })
@Index('memory_uses_user_idx', { synchronize: false })
@Entity('memory_uses')
export class MemoryUseEntity {
  @Column({ name: 'message_id', type: 'uuid', primary: true })
  messageId: string;

  @Column({ name: 'memory_id', type: 'uuid', primary: true })
  memoryId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'used_at', type: 'timestamptz' })
  usedAt: Date;
}
