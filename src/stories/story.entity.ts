import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { StoryFormat, StoryKind, StoryStatus, StoryVisibility } from './story.enums.js';

export interface StoryPage {
  /** 1-based. */
  number: number;
  text: string;
}

/**
 * A story written in the app or a document uploaded to a legacy. Its author's, PRIVATE until
 * they share it, like a fact. Its chunks (for search) live in `story_chunks`, its original file
 * in `story_files`.
 */
@Entity('stories')
export class StoryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'legacy_id', type: 'uuid' })
  legacyId: string;

  @Column({ name: 'author_id', type: 'uuid' })
  authorId: string;

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'text' })
  kind: StoryKind;

  @Column({ type: 'text' })
  format: StoryFormat;

  @Column({ type: 'text' })
  visibility: StoryVisibility;

  @Column({ type: 'text' })
  status: StoryStatus;

  @Column({ name: 'failure_reason', type: 'text', nullable: true })
  failureReason: string | null;

  /** Not read with the row (it can be megabytes): StoryRepository.text and pageRange. */
  @Column({ type: 'jsonb', select: false })
  pages?: StoryPage[];

  @Column({ name: 'page_count', type: 'integer' })
  pageCount: number;

  @Column({ name: 'size_bytes', type: 'integer' })
  sizeBytes: number;

  @Column({ name: 'file_name', type: 'text', nullable: true })
  fileName: string | null;

  @Column({ name: 'mime_type', type: 'text', nullable: true })
  mimeType: string | null;

  @Column({ name: 'occurred_at', type: 'timestamptz', nullable: true })
  occurredAt: Date | null;

  @Column({ name: 'total_chunks', type: 'integer' })
  totalChunks: number;

  @Column({ name: 'indexed_chunks', type: 'integer' })
  indexedChunks: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
