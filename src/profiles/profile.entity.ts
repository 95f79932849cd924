import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A member's consent to their profile being used. Off until they turn it on; turning it off
 * deletes every entry (see ProfileEntryEntity), so this row never holds content.
 */
@Entity('profiles')
export class ProfileEntity {
  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ type: 'boolean', default: false })
  consent: boolean;

  @Column({ name: 'consent_changed_at', type: 'timestamptz', nullable: true })
  consentChangedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
