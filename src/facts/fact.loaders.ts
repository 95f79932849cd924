import { byKey, defineLoader, groupByKey } from '../graphql/loaders.js';
import type { FactEntity, FactSourceEntity } from './fact.entity.js';
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

/** Every mention of each fact, oldest first. */
export const FACT_SOURCES = defineLoader<string, FactSourceEntity[], FactsService>(
  'fact.sources',
  (facts) => async (ids) => groupByKey(ids, await facts.sourcesOf(ids), (s) => s.factId),
);
