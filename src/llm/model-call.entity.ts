import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One language- or embedding-model call, for cost and latency accounting. Append-only. */
@Entity('model_calls')
export class ModelCallEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  task: string;

  @Column({ type: 'text' })
  model: string;

  @Column({ name: 'prompt_version', type: 'text', nullable: true })
  promptVersion: string | null;

  @Column({ name: 'prompt_tokens', type: 'integer' })
  promptTokens: number;

  @Column({ name: 'completion_tokens', type: 'integer' })
  completionTokens: number;

  /** Token counts came from the local tokenizer, not from the server. */
  @Column({ name: 'usage_estimated', type: 'boolean' })
  usageEstimated: boolean;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  @Column({ type: 'integer' })
  attempts: number;

  @Column({ type: 'boolean' })
  ok: boolean;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
