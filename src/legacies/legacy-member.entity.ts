import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { LegacyRole } from './legacy-role.enum.js';

@Entity('legacy_members')
export class LegacyMemberEntity {
  @PrimaryColumn({ name: 'legacy_id', type: 'uuid' })
  legacyId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ type: 'text' })
  role: LegacyRole;

  @CreateDateColumn({ name: 'joined_at', type: 'timestamptz', precision: 3 })
  joinedAt: Date;
}
