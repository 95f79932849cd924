import { defineLoader, groupByKey } from '../graphql/loaders.js';
import type { ParticipantRow } from './conversation-participant.repository.js';
import type { ConversationsService } from './conversations.service.js';

/** Who takes or took part in each conversation, in the order they joined. */
export const CONVERSATION_PARTICIPANTS = defineLoader<
  string,
  ParticipantRow[],
  ConversationsService
>(
  'conversation.participants',
  (conversations) => async (ids) =>
    groupByKey(ids, await conversations.participantsOf(ids), (r) => r.conversationId),
);
