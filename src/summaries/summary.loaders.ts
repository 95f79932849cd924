import { defineLoader, groupByKey } from '../graphql/loaders.js';
import type { ConversationChunkEntity } from './conversation-chunk.entity.js';
import type { SummariesService } from './summaries.service.js';

/** Each conversation's summaries the viewer may read, in turn order. */
export const CONVERSATION_CHUNKS = defineLoader<
  string,
  ConversationChunkEntity[],
  { summaries: SummariesService; viewerId: string }
>(
  'conversation.chunks',
  ({ summaries, viewerId }) =>
    async (ids) =>
      groupByKey(ids, await summaries.chunksOf(ids, viewerId), (c) => c.conversationId),
);

/** Turns of each conversation that no summary covers yet. */
export const UNSUMMARIZED_TURNS = defineLoader<string, number, SummariesService>(
  'conversation.unsummarizedTurns',
  (summaries) => async (ids) => {
    const pending = await summaries.pendingTurns(ids);
    return ids.map((id) => pending.get(id) ?? 0);
  },
);
