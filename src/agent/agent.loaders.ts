import { byKey, defineLoader } from '../graphql/loaders.js';
import type { AssistantReplyEntity } from './assistant-reply.entity.js';
import type { AssistantReplyRepository } from './assistant-reply.repository.js';

/** What the agent was given and used for each assistant turn it wrote. */
export const MESSAGE_GENERATION = defineLoader<
  string,
  AssistantReplyEntity | null,
  AssistantReplyRepository
>(
  'message.generation',
  (replies) => async (ids) => byKey(ids, await replies.findByMessageIds(ids), (r) => r.messageId),
);
