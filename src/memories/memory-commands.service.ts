import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { ConversationEntity } from '../conversations/conversation.entity.js';
import type { MessageEntity } from '../conversations/message.entity.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { ForgetResult, MemoriesService } from './memories.service.js';
import { MemoryClock } from './memory-clock.js';
import { ConversationMode, MemorySource, MemoryStatus } from './memory.enums.js';
import { MemoryLedgerRepository } from './memory-ledger.repository.js';
import { MemoryListRepository } from './memory-list.repository.js';
import {
  ConsentRefusal,
  MemoryConsent,
  consentRefusal,
  requestedContent,
  requestedMemory,
} from './memory-policy.js';
import { MemoryRepository } from './memory.repository.js';
import { inMemoryScope } from './memory-scope.js';
import { MemoryWriterService, SaveResult } from './memory-writer.service.js';

/** At most this many memories go for one "forget what I said about X". */
export const FORGET_BY_CHAT_MAX = 5;

/** Queries too short or too general to say which memories are meant. */
const VAGUE_QUERY =
  /^(?:[a-z]{1,2}|myself|everything|anything|something|stuff|things|all|them|him|her|this|that|those|these)$/i;

/** Why a memory asked for in chat was not saved. */
export type NotSavedReason = ConsentRefusal | 'INVALID_MEMORY';

export type ChatSaveResult =
  { saved: true; result: SaveResult } | { saved: false; reason: NotSavedReason; message: string };

export type ChatForgetResult = ForgetResult;

const REFUSALS: Record<ConsentRefusal, string> = {
  MEMORY_PAUSED: 'Your memory is paused, so nothing was saved.',
  REMEMBER_OFF: 'Remembering is switched off for this conversation, so nothing was saved.',
};

/** A user turn in one of the user's conversations: where a command was said. */
export interface ChatTurn {
  user: UserEntity;
  conversation: ConversationEntity;
  message: MessageEntity;
  /** Others take part in the conversation and read the reply: it names no memory. */
  together?: boolean;
}

/**
 * Memory commands said in chat (the parser's intents or the model's tool calls). Saving honours
 * consent as extraction does (the conversation's remember switch, the user's pause), checked
 * under lock as it is written; forgetting is always allowed: it is the user's control. A turn
 * that was a command is marked in the extraction ledger, so extraction never re-saves it.
 */
@Injectable()
export class MemoryCommandsService {
  constructor(
    private readonly repo: MemoryRepository,
    private readonly listing: MemoryListRepository,
    private readonly ledger: MemoryLedgerRepository,
    private readonly memories: MemoriesService,
    private readonly writer: MemoryWriterService,
    private readonly embeddings: EmbeddingService,
    private readonly clock: MemoryClock,
    private readonly config: AppConfig,
  ) {}

  /** "Remember that I ...": saved at full confidence, from this turn, if consent allows. */
  async save(turn: ChatTurn, text: string): Promise<ChatSaveResult> {
    const checked = requestedContent(text, this.config.env.MEMORY_MAX_LENGTH);
    if ('invalid' in checked) {
      return { saved: false, reason: 'INVALID_MEMORY', message: checked.invalid };
    }
    const refused = await this.repo.transaction(async (m) => {
      await this.markCommand(m, turn, turn.message.id);
      return this.refusal(await this.ledger.consent(m, turn.conversation.id, turn.user.id));
    });
    if (refused) return refused;

    const withdrawn: { refusal: ChatSaveResult | null } = { refusal: null };
    const batch = await this.writer.save(
      turn.user.id,
      turn.conversation.legacyId,
      [
        {
          ...requestedMemory(checked.content, MemorySource.CHAT),
          conversationId: turn.conversation.id,
          sourceMessageId: turn.message.id,
          sourceTurnIndex: turn.message.turnIndex,
          conversationMode: ConversationMode.AGENT,
          validFrom: turn.message.occurredAt,
        },
      ],
      {
        // Consent again, locked: a pause made while the vector was computed stops the save.
        guard: async (m) => {
          const consent = await this.ledger.consent(m, turn.conversation.id, turn.user.id, {
            lock: true,
          });
          withdrawn.refusal = this.refusal(consent);
          return withdrawn.refusal === null;
        },
      },
    );
    if (!batch) return withdrawn.refusal ?? this.refusal({ remember: false, memoryPaused: false })!;
    return { saved: true, result: batch.results[0] };
  }

  /**
   * "Forget what I said about X": the best matches among the user's memories in this legacy
   * and their global ones, at most FORGET_BY_CHAT_MAX, each restorable during the undo window.
   */
  async forgetAbout(turn: ChatTurn, query: string): Promise<ChatForgetResult> {
    const text = query.trim();
    // A substring search for "me" or "it" would match almost anything: nothing is that vague.
    if (!text || VAGUE_QUERY.test(text)) return { memories: [], restorableUntil: null };
    await this.markTurnAsCommand(turn);
    const q = await this.embeddings.embedQuery(text);
    const rows = await this.listing.search(
      turn.user.id,
      { statuses: [MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED] },
      text,
      q,
      this.config.env.MEMORY_SEARCH_MIN_SIMILARITY,
      FORGET_BY_CHAT_MAX * 4,
      0,
    );
    const ids = rows
      .filter((r) =>
        inMemoryScope(r, { userId: turn.user.id, legacyId: turn.conversation.legacyId }),
      )
      .slice(0, FORGET_BY_CHAT_MAX)
      .map((r) => r.id);
    return this.forgetIds(turn.user, ids);
  }

  /**
   * "Don't remember that": what was remembered from the user's previous turn in this
   * conversation, and nothing more from it later (its extraction is marked done).
   */
  async forgetPreviousTurn(turn: ChatTurn): Promise<ChatForgetResult> {
    const previous = await this.repo.transaction(async (m) => {
      await this.markCommand(m, turn, turn.message.id);
      // That participant's own previous turn.
      const id = await this.ledger.answeredUserTurn(
        m,
        turn.conversation.id,
        turn.message.turnIndex,
        turn.user.id,
      );
      if (id) await this.markCommand(m, turn, id);
      return id;
    });
    if (!previous) return { memories: [], restorableUntil: null };
    return this.memories.forgetWhere(turn.user, { sourceMessageId: previous });
  }

  /** The model's memory_forget with ids: only the user's own memories, others are skipped. */
  forgetIds(user: UserEntity, ids: readonly string[]): Promise<ChatForgetResult> {
    return this.memories.forgetWhere(user, { ids: [...new Set(ids)] });
  }

  /** Marks a turn forgetting or saving came from as a command: extraction leaves it alone. */
  async markTurnAsCommand(turn: ChatTurn): Promise<void> {
    await this.repo.transaction((m) => this.markCommand(m, turn, turn.message.id));
  }

  private markCommand(
    m: Parameters<MemoryLedgerRepository['recordCommand']>[0],
    turn: ChatTurn,
    sourceMessageId: string,
  ): Promise<void> {
    return this.ledger.recordCommand(m, {
      sourceMessageId,
      userId: turn.user.id,
      conversationId: turn.conversation.id,
      now: this.clock.now(),
    });
  }

  private refusal(consent: MemoryConsent | null): Extract<ChatSaveResult, { saved: false }> | null {
    const reason = consentRefusal(consent);
    return reason ? { saved: false, reason, message: REFUSALS[reason] } : null;
  }
}
