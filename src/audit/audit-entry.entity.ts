import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** What a platform administrator did with another user's data. */
export enum AuditOperation {
  RETRIEVAL_DEBUG = 'RETRIEVAL_DEBUG',
  FAILED_JOBS = 'FAILED_JOBS',
  RETRY_JOB = 'RETRY_JOB',
}

/**
 * One row of the audit log: who (actor), when, what (operation and target ids). Ids only:
 * never a query, a message or any other private text.
 */
@Entity('audit_log')
export class AuditEntryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Null once the actor's account is gone. */
  @Column({ name: 'actor_id', type: 'uuid', nullable: true })
  actorId: string | null;

  @Column({ type: 'text' })
  operation: AuditOperation;

  @Column({ name: 'target_user_id', type: 'uuid', nullable: true })
  targetUserId: string | null;

  @Column({ name: 'target_legacy_id', type: 'uuid', nullable: true })
  targetLegacyId: string | null;

  @Column({ name: 'target_conversation_id', type: 'uuid', nullable: true })
  targetConversationId: string | null;

  /** Further ids (the jobs listed, the conversations they concern). */
  @Column({ type: 'jsonb' })
  details: Record<string, string[]>;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
