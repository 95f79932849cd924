import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { FactCategory, FactVisibility } from '../facts/fact.enums.js';
import { FactWriterService, StoryFact } from '../facts/fact-writer.service.js';
import type { FactEvent } from '../facts/fact-events.service.js';
import { JobDeferred } from '../jobs/jobs.exception.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import { deferForOutage } from '../llm/model-outage.js';
import { LANGUAGE_MODEL } from '../llm/language-model.js';
import type { LanguageModel } from '../llm/language-model.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { StoryStatus, StoryVisibility } from './story.enums.js';
import { StoryRepository } from './story.repository.js';

export const STORY_EXTRACT_JOB = 'stories:extract';

/** Passages read together by one model call (about 4,000 tokens at the default size). */
const PASSAGES_PER_CALL = 8;

export interface StoryExtractPayload {
  storyId: string;
  /** New facts take the story's visibility instead of PRIVATE (the author chose so). */
  shareLikeStory?: boolean;
}

export interface ExtractionProgress {
  passagesRead: number;
  factsFound: number;
}

/**
 * Facts about the legacy read from a story's passages, as from a conversation: the same model
 * task, categories, dedup and supersession; each mention points at the passage and its page.
 * Passages are marked read in the transaction that applies their facts, so extraction resumes
 * where it stopped and a second run changes nothing.
 */
@Injectable()
export class StoryFactsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: StoryRepository,
    private readonly facts: FactWriterService,
    private readonly legacies: LegaciesService,
    private readonly limits: RateLimitService,
    @Inject(LANGUAGE_MODEL) private readonly llm: LanguageModel,
  ) {}

  /**
   * Reads every unread passage of the story. Throws JobDeferred when the model budget is spent
   * and ModelUnavailableError when the model is down, with what was read so far kept.
   */
  async extract(
    payload: StoryExtractPayload,
    options: { onProgress?: (read: number) => void; maxCalls?: number } = {},
  ): Promise<ExtractionProgress> {
    const story = await this.repo.findById(payload.storyId);
    const progress: ExtractionProgress = { passagesRead: 0, factsFound: 0 };
    if (!story || story.status !== StoryStatus.READY) return progress;
    const legacy = await this.legacies.findForMember(story.authorId, story.legacyId);
    if (!legacy) return progress;
    const occurredAt = story.occurredAt ?? story.createdAt;
    for (let calls = 0; ; calls++) {
      // The caller counts what is left (and queues it): it knows whether it wants to.
      if (options.maxCalls !== undefined && calls >= options.maxCalls) return progress;
      const passages = await this.repo.chunksToExtract(story.id, PASSAGES_PER_CALL);
      if (passages.length === 0) return progress;
      const wait = await this.limits.backgroundModelCall(story.authorId);
      if (wait > 0) throw new JobDeferred(wait, 'model call budget spent');
      const summary = await this.llm.summarizeTurns({
        legacyName: legacy.name,
        turns: passages.map((p) => ({
          turnIndex: p.ordinal,
          // The author's words: facts are read from USER turns.
          role: 'USER' as const,
          content:
            p.heading && !p.content.startsWith('#') ? `${p.heading}\n${p.content}` : p.content,
          occurredAt,
        })),
        existingFacts: [],
      });
      const byOrdinal = new Map(passages.map((p) => [p.ordinal, p]));
      const found: StoryFact[] = [];
      for (const fact of this.facts.keepExtracted(summary.facts)) {
        const passage = fact.sourceTurnIndexes.map((i) => byOrdinal.get(i)).find((p) => !!p);
        if (!passage) continue;
        found.push({
          content: fact.content,
          category: fact.category as FactCategory,
          confidence: fact.confidence,
          storyChunkId: passage.id,
          page: passage.page,
          occurredAt,
        });
      }
      const prepared = await this.facts.prepare(found.map((f) => f.content));
      let events: FactEvent[] = [];
      const applied = await this.dataSource.transaction(async (m) => {
        const current = await this.repo.lock(m, story.id);
        if (!current) return false;
        // Read under the lock: a story unshared meanwhile gives private facts from then on.
        const visibility =
          payload.shareLikeStory && current.visibility === StoryVisibility.SHARED
            ? FactVisibility.SHARED
            : FactVisibility.PRIVATE;
        if (
          !(await this.repo.markExtracted(
            m,
            passages.map((p) => p.id),
          ))
        )
          return false;
        events = await this.facts.applyFromStory(
          m,
          {
            legacyId: story.legacyId,
            legacyName: legacy.name,
            authorId: story.authorId,
            storyId: story.id,
            visibility,
          },
          found,
          prepared,
        );
        return true;
      });
      if (!applied) {
        // Deleted meanwhile, or another run read these passages: nothing more to do here.
        return progress;
      }
      await this.facts.publish(events);
      progress.passagesRead += passages.length;
      progress.factsFound += found.length;
      options.onProgress?.(passages.length);
    }
  }

  /** The job: model outages wait without spending attempts. */
  async runJob(payload: StoryExtractPayload): Promise<void> {
    try {
      await this.extract(payload);
    } catch (err) {
      throw deferForOutage(err, 60_000) ?? err;
    }
  }

  /** Passages of a story not yet read for facts. */
  remaining(storyId: string): Promise<number> {
    return this.repo.countToExtract(storyId);
  }

  /** READY stories in a scope with passages still to read (for the backfill). */
  storiesToExtract(scope: { legacyId?: string | null; authorId?: string | null }) {
    return this.repo.storiesToExtract(scope);
  }
}
