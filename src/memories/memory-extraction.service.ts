import { Inject, Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { MessageRole } from '../conversations/message-role.enum.js';
import type { TurnsStored } from '../conversations/turn-events.js';
import { JobDeferred } from '../jobs/jobs.exception.js';
import { JobsService, retryDelayMs } from '../jobs/jobs.service.js';
import { LANGUAGE_MODEL } from '../llm/language-model.js';
import type { ExtractedMemory, LanguageModel } from '../llm/language-model.js';
import { ModelUnavailableError } from '../llm/model.errors.js';
import { MemoryClock } from './memory-clock.js';
import { ConversationMode, MemorySaveOutcome, MemorySource, MemoryType } from './memory.enums.js';
import { MemoryRepository } from './memory.repository.js';
import { MemoryWriterService } from './memory-writer.service.js';
import { MemoryLedgerRepository } from './memory-ledger.repository.js';
import { MemoryFenceRepository } from './memory-fence.repository.js';
import { consents, policyConfidence } from './memory-policy.js';

export const EXTRACT_JOB = 'memories:extract';

export interface ExtractPayload {
  /** The user's turn: the source of the memories and the job's idempotency key. */
  userMessageId: string;
  /** The assistant turn that answered it (context for the model, never a source). */
  assistantMessageId: string;
}

const MAX_PER_EXCHANGE = 3;
const RATE_WINDOW_MS = 60_000;

/** Why a run stored nothing, or what it did; for logs and tests. */
export type ExtractionOutcome =
  | 'gone'
  | 'not-own-turn'
  | 'no-consent'
  | 'already-done'
  /** The member cleared their memories after the turn was said (memory fences). */
  | 'cleared'
  | { proposed: number; belowThreshold: number; saved: number };

/**
 * Memory extraction after each assistant turn. Consent is checked when the turn is stored and
 * again when the job runs (switching `remember` off or pausing memory stops pending work at
 * once). One ledger row per user turn makes the job idempotent and carries the per-user rate
 * limit: past MEMORY_EXTRACTIONS_PER_MINUTE the job is deferred, never dropped. A model outage
 * defers the job too (no attempt spent); invalid model output is retried like any failure and
 * kept as FAILED for review if it never succeeds. What the member clears or forgets meanwhile
 * fences it (memory-fence.repository.ts): nothing from a turn said before a clear is stored, nor
 * anything restating a memory forgotten after the turn, checked again where the save commits.
 */
@Injectable()
export class MemoryExtractionService {
  private readonly logger = new Logger('Memories');

  constructor(
    private readonly jobs: JobsService,
    private readonly repo: MemoryRepository,
    private readonly ledger: MemoryLedgerRepository,
    private readonly writer: MemoryWriterService,
    private readonly fences: MemoryFenceRepository,
    private readonly clock: MemoryClock,
    private readonly config: AppConfig,
    @Inject(LANGUAGE_MODEL) private readonly llm: LanguageModel,
  ) {}

  /** Enqueues extraction with the turn, so the job exists exactly when the turn does. */
  async enqueue(event: TurnsStored, manager: EntityManager): Promise<void> {
    if (event.imported) return;
    for (const message of event.messages) {
      if (message.role !== MessageRole.ASSISTANT) continue;
      // The participant the reply answered: their switch, their turn.
      if (!consents(await this.ledger.consent(manager, event.conversation.id, message.userId)))
        continue;
      const userMessageId = await this.ledger.answeredUserTurn(
        manager,
        event.conversation.id,
        message.turnIndex,
        message.userId,
      );
      if (!userMessageId) continue;
      const payload: ExtractPayload = { userMessageId, assistantMessageId: message.id };
      await this.jobs.enqueue(EXTRACT_JOB, userMessageId, { ...payload }, { manager });
    }
  }

  /** Exchanges never extracted, for a backfill (see MemoryLedgerRepository). */
  unextracted(
    scope: { legacyId?: string | null; userId?: string | null; includeImports: boolean },
    limit: number,
    after: { conversationId: string; turnIndex: number } | null,
  ) {
    return this.ledger.unextractedExchanges(scope, limit, after);
  }

  async run(payload: ExtractPayload): Promise<ExtractionOutcome> {
    const ex = await this.ledger.exchange(payload.assistantMessageId, payload.userMessageId);
    // The conversation was deleted meanwhile: there is nothing left to remember.
    if (!ex || !ex.userMessageId || ex.userContent === null) return 'gone';
    // Only the answered participant's own turn, for that participant.
    if (ex.userMessageUserId !== ex.answeredUserId) return 'not-own-turn';
    const userId = ex.answeredUserId;
    const ledger = {
      sourceMessageId: ex.userMessageId,
      userId,
      conversationId: ex.conversationId,
      assistantMessageId: ex.assistantMessageId,
    };
    const now = this.clock.now();

    if (!consents(ex)) {
      await this.repo.transaction((m) => this.ledger.recordNoConsent(m, { ...ledger, now }));
      return 'no-consent';
    }

    // The turn's own time: an exchange always has one (its user turn is read with it).
    const said = ex.userCreatedAt ?? now;
    const attempts = await this.repo.transaction(async (m) => {
      await this.repo.lockUser(m, userId);
      const row = await this.ledger.ledgerForUpdate(m, ledger.sourceMessageId);
      if (row?.completedAt) return null;
      // Cleared since it was said: no model call for what could not be stored.
      if (await this.fences.clearedSince(m, userId, said)) {
        await this.ledger.recordCleared(m, { ...ledger, now });
        return 'cleared' as const;
      }
      const limit = this.config.env.MEMORY_EXTRACTIONS_PER_MINUTE;
      const recent = await this.ledger.recentExtractions(
        m,
        userId,
        new Date(now.getTime() - RATE_WINDOW_MS),
        ledger.sourceMessageId,
      );
      if (recent.count >= limit) {
        const frees = (recent.oldest?.getTime() ?? now.getTime()) + RATE_WINDOW_MS;
        throw new JobDeferred(
          Math.max(1000, frees - now.getTime()),
          `memory extraction limit of ${limit} per minute reached`,
        );
      }
      return this.ledger.startExtraction(m, { ...ledger, now });
    });
    if (attempts === null) return 'already-done';
    if (attempts === 'cleared') return 'cleared';

    // Stored memories are deliberately not shown to the model: a restatement must reach the
    // duplicate check, so that it counts as one more reference to the memory already held.
    let proposed: ExtractedMemory[];
    try {
      const extracted = await this.llm.extractMemories({
        userTurn: ex.userContent,
        // A notice is no part of the exchange.
        assistantTurn: ex.assistantPlaceholder ? undefined : ex.assistantContent,
      });
      proposed = extracted.memories.slice(0, MAX_PER_EXCHANGE);
    } catch (err) {
      if (err instanceof ModelUnavailableError && err.retryable) {
        const delay = Math.max(
          retryDelayMs(attempts, this.config.env.JOBS_RETRY_BASE_MS),
          (err.retryAfterSeconds ?? 0) * 1000,
        );
        this.logger.warn({
          msg: 'memory extraction deferred: model unavailable',
          sourceMessageId: ledger.sourceMessageId,
          retryInMs: delay,
        });
        throw new JobDeferred(delay, `model unavailable: ${err.message}`);
      }
      throw err;
    }

    const min = this.config.env.MEMORY_MIN_CONFIDENCE;
    const kept = proposed
      .map((p) => ({
        ...p,
        content: p.content.trim(),
        confidence: policyConfidence(p.content, p.confidence),
      }))
      .filter((p) => p.content.length > 0 && p.confidence >= min);

    const mode = ex.agentWrote ? ConversationMode.AGENT : ConversationMode.CLIENT;
    const finish = (
      m: EntityManager,
      outcome: 'EXTRACTED' | 'NO_CONSENT' | 'CLEARED',
      counts = { created: 0, merged: 0, superseded: 0 },
    ) =>
      this.ledger.completeExtraction(m, ledger.sourceMessageId, {
        outcome,
        model: this.llm.modelId,
        proposed: proposed.length,
        belowThreshold: proposed.length - kept.length,
        ...counts,
        now,
      });
    let withdrawn = false;
    let cleared = false;
    const batch = await this.writer.save(
      userId,
      ex.legacyId,
      kept.map((p) => ({
        type: p.type as MemoryType,
        content: p.content,
        confidence: p.confidence,
        source: MemorySource.CHAT,
        conversationId: ex.conversationId,
        sourceMessageId: ex.userMessageId,
        sourceTurnIndex: ex.userTurnIndex,
        conversationMode: mode,
        validFrom: ex.userOccurredAt,
      })),
      {
        guard: async (m) => {
          if ((await this.ledger.ledgerForUpdate(m, ledger.sourceMessageId))?.completedAt) {
            return false;
          }
          // A clear since the turn was said, while the model ran: nothing of it is stored.
          if (await this.fences.clearedSince(m, userId, said)) {
            cleared = true;
            await finish(m, 'CLEARED');
            return false;
          }
          // Consent again, locked: switching remember off or pausing during the model call
          // stops this save, and a switch made now waits until it is written.
          if (consents(await this.ledger.consent(m, ex.conversationId, userId, { lock: true })))
            return true;
          withdrawn = true;
          await finish(m, 'NO_CONSENT');
          return false;
        },
        // What the member forgot after saying it does not come back from this turn.
        withhold: (m, candidate) =>
          this.fences.restatesForgotten(
            m,
            userId,
            said,
            candidate,
            this.config.env.MEMORY_DUPLICATE_SIMILARITY,
          ),
        complete: (m, saved) => {
          const count = (o: MemorySaveOutcome) =>
            saved.results.filter((r) => r.outcome === o).length;
          return finish(m, 'EXTRACTED', {
            created: count(MemorySaveOutcome.CREATED) + count(MemorySaveOutcome.SUPERSEDED),
            merged: count(MemorySaveOutcome.MERGED),
            superseded: saved.results.reduce((n, r) => n + r.superseded.length, 0),
          });
        },
      },
    );
    if (!batch) return cleared ? 'cleared' : withdrawn ? 'no-consent' : 'already-done';
    return {
      proposed: proposed.length,
      belowThreshold: proposed.length - kept.length,
      saved: batch.results.length,
    };
  }
}
