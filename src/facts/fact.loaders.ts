import { byKey, defineLoader, groupByKey } from '../graphql/loaders.js';
import type { FactEntity, FactSourceEntity } from './fact.entity.js';
import { FAMILY_VIEWER } from './fact-visibility.js';
import type { FactsService } from './facts.service.js';

/** Facts by id that the viewer may see (null for the others), batched per request. */
export const VISIBLE_FACT = defineLoader<
  string,
  FactEntity | null,
  { facts: FactsService; viewerId: string }
>(
  'fact.visibleById',
  ({ facts, viewerId }) =>
    async (ids) =>
      byKey(ids, await facts.findVisibleByIds(viewerId, ids), (f) => f.id),
);

/**
 * Facts as the family sees them (FAMILY_VIEWER), for the console's preview: a loader of its own,
 * since a request's loaders are kept by definition and the caller's view may be asked beside it.
 */
export const FAMILY_VISIBLE_FACT = defineLoader<string, FactEntity | null, FactsService>(
  'fact.familyVisibleById',
  (facts) => async (ids) =>
    byKey(ids, await facts.findVisibleByIds(FAMILY_VIEWER, ids), (f) => f.id),
);

/** Every mention of each fact, oldest first. */
export const FACT_SOURCES = defineLoader<string, FactSourceEntity[], FactsService>(
  'fact.sources',
  (facts) => async (ids) => groupByKey(ids, await facts.sourcesOf(ids), (s) => s.factId),
);
