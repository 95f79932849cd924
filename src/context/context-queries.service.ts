import { Injectable } from '@nestjs/common';
import type { ConversationEntity } from '../conversations/conversation.entity.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { UsersService } from '../identity/users.service.js';
import { LegacyRepository } from '../legacies/legacy.repository.js';
import type { SearchOutcome } from '../search/hybrid-search.service.js';
import { SEARCH_OUTCOME } from '../search/search-context.service.js';
import { ContextAssemblerService } from './context-assembler.service.js';
import { ContextErrorCode, ContextException } from './context.exception.js';
import { ContextPresenter } from './context.presenter.js';
import type { AssembledContextModel } from './models/context.model.js';
import type { RetrievalDebugModel } from './models/retrieval-debug.model.js';

function query(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) {
    throw new ContextException(
      ContextErrorCode.INVALID_QUERY,
      'The query cannot be blank.',
      'query',
    );
  }
  return trimmed;
}

/**
 * The context queries clients call: `context` (what the agent would be given) and the debug
 * view. Only the conversation's owner, or for the debug view a platform admin.
 */
@Injectable()
export class ContextQueriesService {
  constructor(
    private readonly assembler: ContextAssemblerService,
    private readonly conversations: ConversationsService,
    private readonly legacyRepo: LegacyRepository,
    private readonly users: UsersService,
    private readonly presenter: ContextPresenter,
  ) {}

  async context(
    user: UserEntity,
    conversationId: string,
    text: string,
    budget?: number | null,
  ): Promise<AssembledContextModel> {
    const conversation = await this.conversations.getParticipating(user, conversationId);
    const assembled = await this.assemble(user, conversation, query(text), 'CONTEXT', budget);
    return this.presenter.toContextModel(assembled.context, assembled.legacyName);
  }

  /**
   * Every candidate of the retrieval for this message with all its scores, and whether it
   * was kept or dropped and why. The conversation's owner, or a platform admin (who then
   * sees what the owner's agent would see, less what is the owner's alone: their profile).
   */
  async debug(
    user: UserEntity,
    conversationId: string,
    text: string,
  ): Promise<RetrievalDebugModel> {
    const { conversation, participant } = await this.debuggable(user, conversationId);
    // A participant sees their own retrieval; a platform admin sees the starter's.
    const owner = participant ? user : (await this.users.findByIds([conversation.userId]))[0];
    if (!owner) throw ContextException.conversationNotFound();
    const shared = new Map<string, unknown>();
    const { context } = await this.assemble(
      owner,
      conversation,
      query(text),
      'DEBUG',
      null,
      shared,
      user,
    );
    const outcome = shared.get(SEARCH_OUTCOME) as SearchOutcome | undefined;
    return this.presenter.toDebugModel(owner, conversation, text, context, outcome);
  }

  private async assemble(
    user: UserEntity,
    conversation: ConversationEntity,
    text: string,
    purpose: 'CONTEXT' | 'DEBUG',
    budget?: number | null,
    shared?: Map<string, unknown>,
    viewer?: UserEntity,
  ) {
    const legacy = await this.legacyRepo.findById(conversation.legacyId);
    if (!legacy) throw ContextException.conversationNotFound();
    const context = await this.assembler.assemble({
      user,
      viewer: viewer && viewer.id !== user.id ? viewer : undefined,
      conversation,
      legacy,
      query: text,
      budget,
      purpose,
      shared,
    });
    return { context, legacyName: legacy.name };
  }

  private async debuggable(
    user: UserEntity,
    conversationId: string,
  ): Promise<{ conversation: ConversationEntity; participant: boolean }> {
    if (!user.isPlatformAdmin) {
      const conversation = await this.conversations.getParticipating(user, conversationId);
      return { conversation, participant: true };
    }
    const [conversation] = await this.conversations.findByIds([conversationId]);
    if (!conversation) throw ContextException.conversationNotFound();
    return { conversation, participant: false };
  }
}
