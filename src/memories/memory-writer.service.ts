import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { EmbeddedTexts, EmbeddingService, sliceEmbedded } from '../embeddings/embedding.service.js';
import { MemoryClock } from './memory-clock.js';
import type { MemoryCandidate } from './memory-policy.js';
import { MemoryEvents } from './memory-events.js';
import { normalizeMemory, slotOf } from './memory-text.js';
import { MemoryEntity, MemoryHistoryEntry } from './memory.entity.js';
import {
  MemoryChangeAction,
  MemoryHistoryAction,
  MemorySaveOutcome,
  MemoryStatus,
} from './memory.enums.js';
import { MemoryRepository, NewMemory } from './memory.repository.js';
import { MEMORY_KIND, QueryVector } from './memory-sql.js';
import type { FencedCandidate } from './memory-fence.repository.js';

export interface SaveResult {
  outcome: MemorySaveOutcome;
  /** The new memory, or the existing one it restated. */
  memory: MemoryEntity;
  /** Older memories it contradicted, now archived with `supersededBy` pointing at it. */
  superseded: string[];
}

export interface SaveBatch {
  results: SaveResult[];
  /** Memories archived because the scope went over MEMORY_MAX_ACTIVE. */
  archived: string[];
}

export interface SaveOptions {
  /** Runs first inside the transaction; false aborts the save (idempotency guards). */
  guard?: (manager: EntityManager) => Promise<boolean>;
  /** Runs last inside the transaction, with what was saved (ledgers). */
  complete?: (manager: EntityManager, batch: SaveBatch) => Promise<void>;
  /** Runs inside the transaction for each candidate: true leaves it out (memory fences). */
  withhold?: (manager: EntityManager, candidate: FencedCandidate) => Promise<boolean>;
}

/**
 * The one path by which memories are written (extraction, rememberThis, a memory asked for in
 * chat): restatements raise the existing memory's reference count instead of adding a row;
 * contradictions supersede the older memory, keeping it archived with its history; the
 * per-scope cap archives the least referenced, oldest memories. Vectors are made before the
 * transaction; if the embedder is down the memory is stored without one (the sweeper fills it
 * in) and only exact-text duplicates are caught.
 */
@Injectable()
export class MemoryWriterService {
  constructor(
    private readonly repo: MemoryRepository,
    private readonly embeddings: EmbeddingService,
    private readonly events: MemoryEvents,
    private readonly clock: MemoryClock,
    private readonly config: AppConfig,
  ) {}

  async save(
    userId: string,
    legacyId: string | null,
    candidates: MemoryCandidate[],
    options: SaveOptions = {},
  ): Promise<SaveBatch | null> {
    const prepared = candidates.map((c) => ({
      ...c,
      content: c.content.trim(),
      normalized: normalizeMemory(c.content),
      slot: slotOf(c.content),
    }));
    const search = await this.embeddings.searchModel();
    const embedded = await this.embeddings.embedForStorage(prepared.map((c) => c.content));
    const comparison = embedded.find((e) => e.model === search.model);
    const now = this.clock.now();

    const batch = await this.repo.transaction(async (m) => {
      await this.repo.lockUser(m, userId);
      if (options.guard && !(await options.guard(m))) return null;
      const results: SaveResult[] = [];
      for (const [i, c] of prepared.entries()) {
        const vector: QueryVector | null = comparison
          ? { ...search, vector: comparison.vectors[i] }
          : null;
        if (await options.withhold?.(m, { normalized: c.normalized, slot: c.slot, vector }))
          continue;
        results.push(await this.saveOne(m, userId, legacyId, c, vector, embedded, i, now));
      }
      // A restatement can bring back an archived global memory: its scope is checked too.
      const keep = results.map((r) => r.memory.id);
      const archived: string[] = [];
      for (const scope of new Set([legacyId, ...results.map((r) => r.memory.legacyId)])) {
        archived.push(
          ...(await this.repo.archiveOverCap(
            m,
            userId,
            scope,
            this.config.env.MEMORY_MAX_ACTIVE,
            keep,
            now,
          )),
        );
      }
      const out: SaveBatch = { results, archived };
      await options.complete?.(m, out);
      return out;
    });
    if (batch) await this.publish(userId, batch, now);
    return batch;
  }

  private async saveOne(
    m: EntityManager,
    userId: string,
    legacyId: string | null,
    c: MemoryCandidate & {
      normalized: string;
      slot: { key: string; value: string } | null;
    },
    vector: QueryVector | null,
    embedded: EmbeddedTexts[],
    index: number,
    now: Date,
  ): Promise<SaveResult> {
    const sameText = await this.repo.findSameText(m, userId, legacyId, c.normalized);
    if (sameText) return this.merged(m, sameText.id, now);

    let superseded: MemoryEntity[] = [];
    if (c.slot) {
      const slotted = await this.repo.findSlot(m, userId, legacyId, c.slot.key);
      const same = slotted.find((s) => s.slotValue === c.slot!.value);
      if (same) return this.merged(m, same.id, now);
      superseded = slotted;
    }
    if (superseded.length === 0 && vector) {
      const similar = await this.repo.findSimilar(
        m,
        userId,
        legacyId,
        vector,
        this.config.env.MEMORY_DUPLICATE_SIMILARITY,
      );
      if (similar) return this.merged(m, similar.id, now);
    }

    const details: Record<string, unknown> = {};
    if (c.sourceMessageId) details.sourceMessageId = c.sourceMessageId;
    if (superseded.length > 0) details.supersedes = superseded.map((s) => s.id);
    const created: MemoryHistoryEntry = {
      at: now.toISOString(),
      action: MemoryHistoryAction.CREATED,
      ...(superseded.length > 0 ? { reason: 'replaces a memory it contradicts' } : {}),
      ...(Object.keys(details).length > 0 ? { details } : {}),
    };
    const row: NewMemory = {
      userId,
      legacyId,
      type: c.type,
      content: c.content,
      normalized: c.normalized,
      slotKey: c.slot?.key ?? null,
      slotValue: c.slot?.value ?? null,
      confidence: c.confidence,
      source: c.source,
      conversationId: c.conversationId ?? null,
      sourceMessageId: c.sourceMessageId ?? null,
      sourceTurnIndex: c.sourceTurnIndex ?? null,
      conversationMode: c.conversationMode ?? null,
      sourceReference: null,
      referenceCount: 0,
      lastReferencedAt: null,
      status: MemoryStatus.ACTIVE,
      validFrom: c.validFrom ?? now,
      validTo: null,
      archivedAt: null,
      archiveReason: null,
      history: [created],
      createdAt: now,
      updatedAt: now,
    };
    const memory = await this.repo.insert(m, row);
    await this.embeddings.store(
      MEMORY_KIND,
      [{ id: memory.id, legacyId, userId }],
      sliceEmbedded(embedded, index),
      m,
    );
    await this.repo.supersede(
      m,
      superseded.map((s) => s.id),
      memory.id,
      now,
    );
    return {
      outcome: superseded.length > 0 ? MemorySaveOutcome.SUPERSEDED : MemorySaveOutcome.CREATED,
      memory,
      superseded: superseded.map((s) => s.id),
    };
  }

  private async merged(m: EntityManager, id: string, now: Date): Promise<SaveResult> {
    const memory = await this.repo.reference(m, id, now);
    return { outcome: MemorySaveOutcome.MERGED, memory, superseded: [] };
  }

  private async publish(userId: string, batch: SaveBatch, now: Date): Promise<void> {
    for (const r of batch.results) {
      await this.events.one(
        r.outcome === MemorySaveOutcome.MERGED
          ? MemoryChangeAction.UPDATED
          : MemoryChangeAction.SAVED,
        r.memory,
        now,
      );
    }
    const archived = [...batch.results.flatMap((r) => r.superseded), ...batch.archived];
    await this.events.many(userId, MemoryChangeAction.ARCHIVED, archived, now);
  }
}
