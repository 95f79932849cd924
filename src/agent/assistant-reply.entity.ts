import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A context item given to the model for a reply: enough to trace it back to its source. */
export interface ContextItemRef {
  sourceType: string;
  id: string;
  section: string;
  score: number;
}

/** What a reply did to the user's memories, for "Undo" in the client. */
export type MemoryActionKind = 'SAVED' | 'FORGOTTEN' | 'LOOKED_UP' | 'NOT_SAVED';

export interface MemoryActionRecord {
  action: MemoryActionKind;
  /** Saved or forgotten memories; for LOOKED_UP, the memories among the recalled items. */
  memoryIds: string[];
  /** FORGOTTEN: until when restoreMemory brings them back. */
  restorableUntil: string | null;
  /** NOT_SAVED: MEMORY_PAUSED, REMEMBER_OFF or INVALID_MEMORY. */
  reason: string | null;
  /** FORGOTTEN and LOOKED_UP: what the user asked about (null for "don't remember that"). */
  query: string | null;
}

/** How one agent-written assistant turn came about. */
@Entity('assistant_replies')
export class AssistantReplyEntity {
  @PrimaryColumn({ name: 'message_id', type: 'uuid' })
  messageId: string;

  @Column({ name: 'conversation_id', type: 'uuid' })
  conversationId: string;

  @Column({ name: 'reply_to_message_id', type: 'uuid' })
  replyToMessageId: string;

  @Column({ type: 'text' })
  model: string;

  @Column({ name: 'prompt_tokens', type: 'integer' })
  promptTokens: number;

  @Column({ name: 'completion_tokens', type: 'integer' })
  completionTokens: number;

  @Column({ name: 'finish_reason', type: 'text', nullable: true })
  finishReason: string | null;

  @Column({ name: 'is_error', type: 'boolean' })
  isError: boolean;

  @Column({ name: 'error_code', type: 'text', nullable: true })
  errorCode: string | null;

  @Column({ name: 'context_items', type: 'jsonb' })
  contextItems: ContextItemRef[];

  @Column({ name: 'context_tokens', type: 'integer' })
  contextTokens: number;

  @Column({ name: 'context_truncated', type: 'boolean' })
  contextTruncated: boolean;

  @Column({ name: 'memory_actions', type: 'jsonb', default: () => "'[]'::jsonb" })
  memoryActions: MemoryActionRecord[];

  @Column({ name: 'latency_ms', type: 'integer', nullable: true })
  latencyMs: number | null;

  /** The conversation is in the memory A/B holdout: the reply was given no memory block. */
  @Column({ name: 'memory_holdout', type: 'boolean', default: false })
  memoryHoldout: boolean;

  /** Memories in the block (held out: that the block would have held). */
  @Column({ name: 'memories_offered', type: 'integer', default: 0 })
  memoriesOffered: number;

  /** The reply repeats one of those memories (see signals/memory-reference.ts). */
  @Column({ name: 'memory_referenced', type: 'boolean', default: false })
  memoryReferenced: boolean;

  /** The user's turn it answers is a "you forgot" complaint. */
  @Column({ name: 'forgot_complaint', type: 'boolean', default: false })
  forgotComplaint: boolean;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
