import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { CombinedError, useClient, type AnyVariables, type TypedDocumentNode } from 'urql';
import { useLatest } from './use-latest';

/** A Relay connection as the lists ask for it: its edges and where the next page starts. */
export interface Connection<N> {
  edges: readonly { node: N }[];
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
}

/**
 * A connection's nodes, read from its edges: the API's `nodes` is deprecated, since
 * Relay-style pagination helpers merge edges only.
 */
export function nodesOf<N>(connection: { edges: readonly { node: N }[] }): N[];
export function nodesOf<N>(
  connection: { edges: readonly { node: N }[] } | null | undefined,
): N[] | undefined;
export function nodesOf<N>(
  connection: { edges: readonly { node: N }[] } | null | undefined,
): N[] | undefined {
  return connection?.edges.map((e) => e.node);
}

export interface More<N> {
  /** The first page, then each page shown with "Show more", each node once. */
  nodes: N[];
  hasMore: boolean;
  loading: boolean;
  error: CombinedError | string | null;
  more: () => void;
}

const NONE: never[] = [];

/**
 * "Show more" under a list whose first page the page's own query reads (live events and polls
 * ask it again): the next pages are asked with `after` and appended. When the first page comes
 * back anew, the pages shown after it are asked again from its new end, so the list stays one
 * run of the connection (nothing twice, nothing skipped, nothing deleted left behind). Other
 * variables (a filter) start again from the first page.
 */
export function useMore<D, V extends AnyVariables, N extends { id: string }>(
  query: TypedDocumentNode<D, V>,
  variables: V,
  select: (data: D) => Connection<N>,
  first: Connection<N> | undefined,
): More<N> {
  const client = useClient();
  const key = JSON.stringify(variables);
  const [shown, setShown] = useState<{ key: string; pages: Connection<N>[] }>({ key, pages: [] });
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<CombinedError | string | null>(null);
  const pages = shown.key === key ? shown.pages : NONE;
  const latest = useLatest({ client, query, variables, select, key, pages });
  // Only the newest walk may show its pages: an older one was asked before a newer answer.
  const generation = useRef(0);

  /** `count` pages after `from`, one after another; `keep` first. */
  const walk = useCallback(
    (from: Connection<N>, count: number, keep: Connection<N>[]) => {
      const { client, query, variables, select, key } = latest.current;
      const mine = ++generation.current;
      setLoading(true);
      void (async () => {
        const found: Connection<N>[] = [];
        let last = from;
        while (found.length < count && last.pageInfo.hasNextPage && last.pageInfo.endCursor) {
          const result = await client
            .query(query, { ...variables, after: last.pageInfo.endCursor } as V, {
              requestPolicy: 'network-only',
            })
            .toPromise();
          if (!result.data) throw result.error ?? new Error('The next page did not come.');
          last = select(result.data);
          found.push(last);
        }
        return found;
      })().then(
        (found) => {
          if (mine !== generation.current) return;
          setShown({ key, pages: [...keep, ...found] });
          setError(null);
          setLoading(false);
        },
        (err: Error) => {
          if (mine !== generation.current) return;
          setError(err instanceof CombinedError ? err : err.message);
          setLoading(false);
        },
      );
    },
    [latest],
  );

  useEffect(() => {
    const shownAfter = latest.current.pages.length;
    if (first && shownAfter > 0) walk(first, shownAfter, []);
  }, [first, walk, latest]);

  const more = useCallback(() => {
    const { pages } = latest.current;
    const last = pages.at(-1) ?? first;
    if (last) walk(last, 1, pages);
  }, [first, walk, latest]);

  const nodes = useMemo(() => {
    const seen = new Set<string>();
    return [nodesOf(first) ?? NONE, ...pages.map((p) => nodesOf(p))]
      .flat()
      .filter((n) => !seen.has(n.id) && !!seen.add(n.id));
  }, [first, pages]);

  return {
    nodes,
    hasMore: (pages.at(-1) ?? first)?.pageInfo.hasNextPage ?? false,
    loading,
    error,
    more,
  };
}
