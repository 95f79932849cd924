import { registerEnumType } from '@nestjs/graphql';

export enum ArchiveKind {
  /** What one member may see of a legacy, as a ZIP to download. */
  EXPORT = 'EXPORT',
  /** An uploaded archive, brought in as a new legacy. */
  IMPORT = 'IMPORT',
}

export enum ArchiveStatus {
  /** An archive uploaded for import, checked, waiting for importLegacyArchive. */
  UPLOADED = 'UPLOADED',
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  /** An export ready to download; an import whose legacy is whole. */
  COMPLETED = 'COMPLETED',
  FAILED = 'FAILED',
  /** Kept ARCHIVE_KEEP, then deleted. */
  EXPIRED = 'EXPIRED',
}

registerEnumType(ArchiveKind, { name: 'ArchiveKind' });
registerEnumType(ArchiveStatus, { name: 'ArchiveStatus' });
