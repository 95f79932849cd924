import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A searchable chunk of a turn (the whole turn when it is short). Written only by the indexing
 * job; `search_tsv` and `kinds_tsv` are generated columns, kept out of the entity (see the
 * migrations).
 */
@Entity('message_segments')
export class MessageSegmentEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'message_id', type: 'uuid' })
  messageId: string;

  @Column({ name: 'conversation_id', type: 'uuid' })
  conversationId: string;

  @Column({ name: 'legacy_id', type: 'uuid' })
  legacyId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'turn_index', type: 'integer' })
  turnIndex: number;

  /** 0, 1, 2, ... within the turn. */
  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'text' })
  role: string;

  /** From the turn's metadata (`speaker`), for imported dialogues between people. */
  @Column({ type: 'text', nullable: true })
  speaker: string | null;

  /** From the turn's metadata (`image_caption` or `caption`): a description of a shared photo. */
  @Column({ type: 'text', nullable: true })
  caption: string | null;

  /** The end of the preceding turn (or chunk), which this one usually answers. */
  @Column({ type: 'text', nullable: true })
  context: string | null;

  @Column({ type: 'text' })
  content: string;

  @Column({ name: 'is_code', type: 'boolean', default: false })
  isCode: boolean;

  @Column({ type: 'text', nullable: true })
  language: string | null;

  @Column({ name: 'char_start', type: 'integer' })
  charStart: number;

  @Column({ name: 'char_end', type: 'integer' })
  charEnd: number;

  @Column({ name: 'token_count', type: 'integer' })
  tokenCount: number;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;

  /** The period the turn tells of ("last Friday"), read against when it was said. */
  @Column({ name: 'told_from', type: 'timestamptz', nullable: true })
  toldFrom: Date | null;

  @Column({ name: 'told_to', type: 'timestamptz', nullable: true })
  toldTo: Date | null;

  /** Whether the told period was read (segments stored before it existed are read later). */
  @Column({ name: 'told_checked', type: 'boolean', default: false })
  toldChecked: boolean;

  /** What the things the chunk names are kinds of (WordNet), indexed at full-text weight 'C'. */
  @Column({ type: 'text', nullable: true })
  kinds: string | null;

  /**
   * The version of the kinds' rules that read them (KINDS_VERSION); null until read. Segments of
   * an older version, or stored before kinds existed, are read by the KINDS_JOB.
   */
  @Column({ name: 'kinds_version', type: 'smallint', nullable: true })
  kindsVersion: number | null;

  @Column({ name: 'main_length', type: 'integer', default: 0 })
  mainLength: number;

  @Column({ name: 'context_length', type: 'integer', default: 0 })
  contextLength: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
