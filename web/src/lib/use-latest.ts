import { useEffect, useRef } from 'react';

/**
 * The latest value, for subscription handlers: urql keeps the handler a subscription started
 * with, and a refetch captured then would run the query with the filters of that time.
 */
export function useLatest<T>(value: T) {
  const ref = useRef(value);
  useEffect(() => {
    ref.current = value;
  }, [value]);
  return ref;
}
