import { useCallback, useEffect, useRef } from 'react';
import { useLatest } from './use-latest';

/**
 * `fn` once for a burst of calls within `ms`, at its end: a member's own change arrives as the
 * mutation's answer and again as a live event, and several members' changes come together;
 * the list is asked again once, with the filters of that moment.
 */
export function useCoalesced(fn: () => void, ms = 150): () => void {
  const latest = useLatest(fn);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current !== null) clearTimeout(timer.current);
    },
    [],
  );
  return useCallback(() => {
    if (timer.current !== null) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      latest.current();
    }, ms);
  }, [latest, ms]);
}
