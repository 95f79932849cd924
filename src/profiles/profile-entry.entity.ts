import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { ProfileField, ProfileValue } from './profile-fields.js';

/**
 * One filled-in field of a member's profile, with the sentence that is embedded, recalled and
 * given to the agent. A relationship is one entry per legacy; every other field has at most one.
 */
@Entity('profile_entries')
export class ProfileEntryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ type: 'text' })
  field: ProfileField;

  /** Set for relationships only: the legacy the relationship is to. */
  @Column({ name: 'legacy_id', type: 'uuid', nullable: true })
  legacyId: string | null;

  @Column({ type: 'jsonb' })
  value: ProfileValue;

  @Column({ type: 'text' })
  text: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
