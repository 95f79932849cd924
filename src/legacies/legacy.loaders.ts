import { defineLoader, groupByKey } from '../graphql/loaders.js';
import type { LegaciesService } from './legacies.service.js';
import type { LegacyMemberEntity } from './legacy-member.entity.js';

/** The members of each legacy. */
export const LEGACY_MEMBERS = defineLoader<string, LegacyMemberEntity[], LegaciesService>(
  'legacy.members',
  (legacies) => async (ids) => groupByKey(ids, await legacies.membersOf(ids), (m) => m.legacyId),
);

/** Whether the viewer may see each user's email (LegaciesService.emailsVisibleTo). */
export const EMAIL_VISIBLE = defineLoader<
  string,
  boolean,
  { legacies: LegaciesService; viewerId: string }
>('legacy.emailVisible', ({ legacies, viewerId }) => async (ids) => {
  const visible = await legacies.emailsVisibleTo(viewerId, ids);
  return ids.map((id) => visible.has(id));
});
