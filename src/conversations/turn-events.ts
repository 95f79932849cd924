import { Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ConversationEntity } from './conversation.entity.js';
import { MessageEntity } from './message.entity.js';

export interface TurnsStored {
  conversation: ConversationEntity;
  messages: MessageEntity[];
  /** True for importConversation: a bulk backfill rather than live turns. */
  imported: boolean;
  /** For an import (whose turns are not listed): when its first and last turns were said. */
  span?: { from: Date; to: Date };
}

type InTransactionHook = (event: TurnsStored, manager: EntityManager) => Promise<void>;
type AfterCommitHook = (event: TurnsStored) => Promise<void> | void;
type DeletedHook = (conversation: ConversationEntity, manager: EntityManager) => Promise<void>;

/**
 * "Turn stored", published by the conversation log. Higher modules (jobs for summarization and
 * memory extraction, search indexing) register here instead of the log importing them.
 * In-transaction hooks run inside the append's transaction, so work they enqueue is committed
 * with the turn or not at all; after-commit hooks see only committed turns.
 */
@Injectable()
export class TurnEvents {
  private readonly logger = new Logger('Conversations');
  private readonly inTransaction: InTransactionHook[] = [];
  private readonly afterCommit: AfterCommitHook[] = [];
  private readonly deleted: DeletedHook[] = [];

  onStoredInTransaction(hook: InTransactionHook): void {
    this.inTransaction.push(hook);
  }

  onStored(hook: AfterCommitHook): void {
    this.afterCommit.push(hook);
  }

  /**
   * Runs in the deletion's transaction, after the conversation's rows are gone: what was derived
   * from it elsewhere (period summaries) is marked for rebuilding with the deletion or not at all.
   */
  onConversationDeleted(hook: DeletedHook): void {
    this.deleted.push(hook);
  }

  async runDeleted(conversation: ConversationEntity, manager: EntityManager): Promise<void> {
    for (const hook of this.deleted) await hook(conversation, manager);
  }

  async runInTransaction(event: TurnsStored, manager: EntityManager): Promise<void> {
    for (const hook of this.inTransaction) await hook(event, manager);
  }

  async runAfterCommit(event: TurnsStored): Promise<void> {
    for (const hook of this.afterCommit) await hook(event);
  }

  /** After turns committed: a failing listener is logged, never failing the write it follows. */
  async runAfterCommitLogged(event: TurnsStored): Promise<void> {
    try {
      await this.runAfterCommit(event);
    } catch (err) {
      this.logger.error(`after-commit turn hook failed: ${(err as Error).message}`);
    }
  }
}
