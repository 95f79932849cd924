import type { MessageEntity } from '../conversations/message.entity.js';
import { defineLoader } from '../graphql/loaders.js';
import type { UserEntity } from '../identity/user.entity.js';
import type { MemoriesService } from './memories.service.js';
import type { MemoryEntity } from './memory.entity.js';

type ForUser = { memories: MemoriesService; user: UserEntity };

/** The turn each memory was taken from, when it is the viewer's own. */
export const MEMORY_SOURCE_MESSAGE = defineLoader<string, MessageEntity | null, ForUser>(
  'memory.sourceMessage',
  ({ memories, user }) =>
    (ids) =>
      memories.sourceMessages(user, ids),
);

/** The viewer's memories the agent was given for each reply. */
export const MESSAGE_USED_MEMORIES = defineLoader<string, MemoryEntity[], ForUser>(
  'message.usedMemories',
  ({ memories, user }) =>
    (ids) =>
      memories.usedBy(user, ids),
);

/** The viewer's own memories by id (Memory.supersededBy): another's reads as none. */
export const OWN_MEMORY = defineLoader<string, MemoryEntity | null, ForUser>(
  'memory.own',
  ({ memories, user }) =>
    (ids) =>
      memories.ownedByIds(user, ids),
);
