import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { ArchiveKind, ArchiveStatus } from './archive.enums.js';

/** What an archive holds, by kind of item. */
export interface ArchiveCounts {
  facts?: number;
  stories?: number;
  storyBytes?: number;
  conversations?: number;
  turns?: number;
  memories?: number;
  periodSummaries?: number;
}

/** Where an import has got to: the part being read and the lines of it already imported. */
export interface ImportCursor {
  part: string;
  line: number;
}

/**
 * A legacy archive: an export of what its member may see of a legacy, or an uploaded archive
 * imported as a new legacy. Its requester's alone. The ZIP itself is in the archive store.
 */
@Entity('legacy_archives')
export class LegacyArchiveEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  kind: ArchiveKind;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'legacy_id', type: 'uuid', nullable: true })
  legacyId: string | null;

  @Column({ type: 'text' })
  status: ArchiveStatus;

  @Column({ type: 'text', nullable: true })
  stage: string | null;

  @Column({ type: 'integer' })
  done: number;

  @Column({ type: 'integer' })
  total: number;

  @Column({ type: 'jsonb' })
  counts: ArchiveCounts;

  @Column({ type: 'jsonb', nullable: true })
  cursor: ImportCursor | null;

  @Column({ type: 'jsonb', nullable: true })
  manifest: Record<string, unknown> | null;

  @Column({ name: 'file_name', type: 'text', nullable: true })
  fileName: string | null;

  @Column({ name: 'size_bytes', type: 'bigint', nullable: true })
  sizeBytes: string | null;

  @Column({ name: 'stored_in', type: 'text', nullable: true })
  storedIn: 'directory' | 'database' | null;

  @Column({ name: 'failure_reason', type: 'text', nullable: true })
  failureReason: string | null;

  @Column({ name: 'failure_code', type: 'text', nullable: true })
  failureCode: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
