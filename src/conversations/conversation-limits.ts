import type { WindowQuota } from '../quotas/quotas.service.js';
import { ConversationErrorCode, ConversationException } from './conversation.exception.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The limits on making conversations, in one place for every way of making them:
 * startConversation, importConversation and a legacy archive's import.
 */

/** CONVERSATIONS_PER_USER_PER_DAY: conversations one member starts or imports in any 24 hours. */
export function conversationsPerDay(limit: number, userId: string): WindowQuota {
  return {
    scope: 'conversations.created',
    subjectId: userId,
    limit,
    windowMs: DAY_MS,
    message: `You can start or import ${limit} conversations a day; try again later.`,
  };
}

/**
 * IMPORT_MAX_MESSAGES: the turns one imported conversation holds, at least one. `count` is all
 * of them, those of earlier batches included (an archive's import appends in batches).
 */
export function checkImportedTurns(count: number, max: number, field = 'messages'): void {
  if (count > 0 && count <= max) return;
  throw new ConversationException(
    ConversationErrorCode.IMPORT_TOO_LARGE,
    count === 0
      ? 'An imported conversation holds at least one turn.'
      : `An imported conversation holds at most ${max} turns (IMPORT_MAX_MESSAGES); this one has ${count} or more.`,
    field,
  );
}
