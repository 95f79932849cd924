/**
 * Who may change who sees what a member wrote for the family (a fact, a story): the one place
 * that decides. Its author shares it and takes it back; an owner or admin of the legacy may
 * only take a member's shared item back to private (moderation), never share it.
 *
 * - `author`: the author's own change, either way.
 * - `moderator`: allowed if the actor manages the legacy (the caller asks, with its own error).
 * - `refused`: someone other than its author would share it.
 */
export type VisibilityChanger = 'author' | 'moderator' | 'refused';

export function visibilityChanger(
  item: { authorId: string },
  actorId: string,
  toShared: boolean,
): VisibilityChanger {
  if (item.authorId === actorId) return 'author';
  return toShared ? 'refused' : 'moderator';
}
