import { defineLoader, groupByKey } from '../graphql/loaders.js';
import type { LegaciesService } from './legacies.service.js';
import type { LegacyMemberEntity } from './legacy-member.entity.js';

/** The members of each legacy. */
export const LEGACY_MEMBERS = defineLoader<string, LegacyMemberEntity[], LegaciesService>(
  'legacy.members',
  (legacies) => async (ids) => groupByKey(ids, await legacies.membersOf(ids), (m) => m.legacyId),
);
