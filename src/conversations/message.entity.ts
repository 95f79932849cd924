import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { MessageRole } from './message-role.enum.js';

/** One turn of the immutable log. A trigger rejects updates to what was said. */
@Entity('messages')
export class MessageEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'conversation_id', type: 'uuid' })
  conversationId: string;

  @Column({ name: 'legacy_id', type: 'uuid' })
  legacyId: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'turn_index', type: 'integer' })
  turnIndex: number;

  @Column({ type: 'text' })
  role: MessageRole;

  @Column({ type: 'text' })
  content: string;

  @Column({ name: 'token_count', type: 'integer' })
  tokenCount: number;

  @Column({ type: 'jsonb', default: {} })
  metadata: Record<string, unknown>;

  /**
   * No content of the conversation: the notice given when no language model is configured, or
   * a failed reply's. Kept in the log; left out of search, summaries, facts and memories.
   */
  @Column({ type: 'boolean', default: false })
  placeholder: boolean;

  /**
   * An agent's turn written for the participant it answers alone (the conversation was not
   * together then), with what only they may see: no one else reads it (ConversationAccess).
   */
  @Column({ name: 'answered_alone', type: 'boolean', default: false })
  answeredAlone: boolean;

  @Column({ name: 'client_message_id', type: 'text', nullable: true })
  clientMessageId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt: Date;
}
