import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { LegacyRole } from './legacy-role.enum.js';

/** A membership offered to whoever holds this (verified) email, until they answer or it expires. */
@Entity('legacy_invitations')
export class LegacyInvitationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'legacy_id', type: 'uuid' })
  legacyId: string;

  /** Lower-cased. */
  @Column({ type: 'text' })
  email: string;

  @Column({ type: 'text' })
  role: LegacyRole;

  @Column({ name: 'invited_by', type: 'uuid' })
  invitedBy: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
