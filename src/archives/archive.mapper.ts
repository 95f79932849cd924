import type { LegacyArchiveEntity } from './archive.entity.js';
import { ArchiveKind, ArchiveStatus } from './archive.enums.js';
import type { LegacyArchiveModel } from './models/legacy-archive.model.js';

export function toArchiveModel(a: LegacyArchiveEntity): LegacyArchiveModel {
  const completed = a.status === ArchiveStatus.COMPLETED;
  const done = completed ? Math.max(a.done, a.total) : a.done;
  return {
    id: a.id,
    kind: a.kind,
    status: a.status,
    legacyId: a.legacyId,
    stage: a.stage,
    done,
    total: a.total,
    progress: completed ? 1 : a.total > 0 ? Math.min(1, a.done / a.total) : 0,
    counts: {
      facts: a.counts.facts ?? 0,
      stories: a.counts.stories ?? 0,
      conversations: a.counts.conversations ?? 0,
      turns: a.counts.turns ?? 0,
      memories: a.counts.memories ?? 0,
      periodSummaries: a.counts.periodSummaries ?? 0,
    },
    fileName: a.fileName,
    sizeBytes: a.sizeBytes === null ? null : Number(a.sizeBytes),
    downloadUrl: completed && a.kind === ArchiveKind.EXPORT ? `/archives/${a.id}/file` : null,
    failureCode: a.failureCode,
    failureReason: a.failureReason,
    createdAt: a.createdAt,
    finishedAt: a.finishedAt,
    expiresAt: a.expiresAt,
  };
}
