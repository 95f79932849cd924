import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

@Entity('users')
export class UserEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The token's `sub` (and issuer), unique per identity provider. */
  @Column({ type: 'text', unique: true })
  subject: string;

  @Column({ type: 'text', nullable: true })
  email: string | null;

  @Column({ name: 'display_name', type: 'text', nullable: true })
  displayName: string | null;

  @Column({ type: 'text', default: 'UTC' })
  timezone: string;

  /** Consent is opt-in: off until the user turns it on. */
  @Column({ name: 'remember_by_default', type: 'boolean', default: false })
  rememberByDefault: boolean;

  /** While paused, no memory is created from conversations and none is used in replies. */
  @Column({ name: 'memory_paused', type: 'boolean', default: false })
  memoryPaused: boolean;

  /** Keeps memories out of the retention rule that archives old, unreferenced ones. */
  @Column({ name: 'long_term_memory', type: 'boolean', default: false })
  longTermMemory: boolean;

  @Column({ name: 'is_platform_admin', type: 'boolean', default: false })
  isPlatformAdmin: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
