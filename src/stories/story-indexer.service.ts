import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { JobDeferred } from '../jobs/jobs.exception.js';
import { StoryEventsService } from './story-events.service.js';
import { chunkStoryInSteps, StoryChunk } from './story-chunker.js';
import { StoryPage } from './story.entity.js';
import { StoryChange, StoryStatus, StoryVisibility } from './story.enums.js';
import { STORY_KIND, StoryRepository } from './story.repository.js';

/** Passages embedded together. */
const EMBED_BATCH = 32;

/**
 * The index job behind every story: its text split into passages, embedded and made
 * searchable in the background, with progress on the story, then READY (or FAILED).
 */
@Injectable()
export class StoryIndexerService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: StoryRepository,
    private readonly embeddings: EmbeddingService,
    private readonly events: StoryEventsService,
    private readonly config: AppConfig,
  ) {}

  /**
   * The index job: split the text into chunks (if not done), then embed those without a vector
   * in batches, counting progress on the story; READY when every chunk has one. Idempotent: a
   * second run finds nothing to do.
   */
  async index(storyId: string): Promise<void> {
    const story = await this.repo.findById(storyId);
    if (!story || story.status === StoryStatus.FAILED) return;
    if ((await this.repo.chunkCount(storyId)) === 0) {
      const text = await this.repo.text(storyId);
      if (!text) return;
      const chunks = await this.chunks(text.pages);
      if (chunks.length === 0) {
        const failed = await this.repo.fail(storyId, 'No text could be read from it.');
        if (failed)
          await this.events.publish(
            failed,
            StoryChange.FAILED,
            failed.visibility === StoryVisibility.SHARED,
          );
        return;
      }
      const written = await this.dataSource.transaction(async (m) => {
        if (!(await this.repo.lock(m, storyId))) return false;
        // Its text edited since it was read: the edit's own job indexes the new text.
        if ((await this.repo.textDigest(m, storyId)) !== text.digest) return false;
        await this.repo.replaceChunks(m, story, chunks);
        return true;
      });
      if (!written) return;
    }
    const model = (await this.embeddings.searchModel()).model;
    // A cursor over the passages: each batch starts after the last, never rescanning the start.
    let after = -1;
    for (;;) {
      const batch = await this.repo.chunksWithoutVector(storyId, model, EMBED_BATCH, after);
      if (batch.length === 0) break;
      after = batch[batch.length - 1].ordinal;
      const embedded = await this.embeddings.embedForStorage(batch.map((c) => c.text));
      if (!embedded.some((e) => e.model === model)) {
        throw new JobDeferred(60_000, 'embeddings unavailable: the story waits to be indexed');
      }
      // Under the story's lock: a story deleted while its passages were embedded leaves no vector.
      const stored = await this.dataSource.transaction(async (m) => {
        if (!(await this.repo.lock(m, storyId))) return false;
        const alive = new Set(
          await this.repo.existingChunkIds(
            m,
            batch.map((c) => c.id),
          ),
        );
        const kept = batch.filter((c) => alive.has(c.id));
        await this.embeddings.store(
          STORY_KIND,
          kept.map((c) => ({ id: c.id, legacyId: c.legacyId, userId: c.authorId })),
          embedded.map((e) => ({
            ...e,
            vectors: e.vectors.filter((_, i) => alive.has(batch[i].id)),
          })),
          m,
        );
        await this.repo.addProgress(m, storyId, kept.length);
        return true;
      });
      if (!stored) return;
    }
    const done = await this.repo.recordProgress(storyId, model);
    if (done?.status === StoryStatus.READY && story.status !== StoryStatus.READY) {
      await this.events.publish(
        done,
        StoryChange.READY,
        done.visibility === StoryVisibility.SHARED,
      );
    }
  }

  /**
   * The index job's last attempt failed: the story is FAILED with the reason, rather than
   * PROCESSING for ever (its author can upload it again or delete it).
   */
  async indexFailed(storyId: string, err: unknown): Promise<void> {
    const reason = `Indexing failed: ${err instanceof Error ? err.message : String(err)}`;
    const failed = await this.repo.fail(storyId, reason.slice(0, 500));
    if (failed) {
      await this.events.publish(
        failed,
        StoryChange.FAILED,
        failed.visibility === StoryVisibility.SHARED,
      );
    }
  }

  /** Chunks in steps of bounded length, yielding between them: a long document never stalls. */
  private chunks(pages: StoryPage[]): Promise<StoryChunk[]> {
    return chunkStoryInSteps(pages, this.config.env.STORY_CHUNK_TOKENS, () => yieldToLoop());
  }
}
