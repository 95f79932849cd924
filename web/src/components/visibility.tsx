/**
 * Who sees something, said the same way on every page: "Only you" (private: nothing wrong with
 * it, so nothing red about it) or "Shared with the family".
 */
export function VisibilityBadge({ visibility }: { visibility: string }) {
  const shared = visibility === 'SHARED';
  return (
    <span className={`badge ${shared ? 'shared' : 'private'}`}>
      {shared ? 'Shared with the family' : 'Only you'}
    </span>
  );
}

/** The same words in a filter's choices. */
export const VISIBILITY_CHOICES = [
  { value: 'SHARED', label: 'Shared with the family' },
  { value: 'PRIVATE', label: 'Only you' },
] as const;
