import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

@Entity('conversations')
export class ConversationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'legacy_id', type: 'uuid' })
  legacyId: string;

  /**
   * The member who started it: theirs to delete. Who may read it and write in it is in
   * conversation_participants (the starter included).
   */
  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ type: 'text', nullable: true })
  title: string | null;

  /** Brought in with importConversation rather than held live. */
  @Column({ type: 'boolean', default: false })
  imported: boolean;

  /** The turn index the next message takes; bumped under a row lock. */
  @Column({ name: 'next_turn_index', type: 'integer', default: 0 })
  nextTurnIndex: number;

  @Column({ name: 'last_activity_at', type: 'timestamptz', precision: 3 })
  lastActivityAt: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
