import type { More } from '../lib/more';
import { ErrorNote } from './status';

/** The button under a list with more pages (`what` names the list for screen readers). */
export function ShowMore({ list, what }: { list: More<unknown>; what: string }) {
  return (
    <>
      <ErrorNote error={list.error} />
      {list.hasMore && (
        <p className="actions">
          <button type="button" onClick={list.more} disabled={list.loading}>
            Show more<span className="sr-only"> {what}</span>
          </button>
        </p>
      )}
    </>
  );
}
