import { useEffect } from 'react';

/** While a story is being indexed the API sends no event per passage: pages ask again this often. */
export const INDEXING_POLL_MS = 1500;

/** Calls `reload` every INDEXING_POLL_MS while `indexing` is true. */
export function usePollWhileIndexing(indexing: boolean, reload: () => void) {
  useEffect(() => {
    if (!indexing) return;
    const timer = setInterval(reload, INDEXING_POLL_MS);
    return () => clearInterval(timer);
  }, [indexing, reload]);
}
