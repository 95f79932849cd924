import { LegacyRole } from '../legacies/legacy-role.enum.js';
import { StoryVisibility } from './story.enums.js';
import { Sql, raw, sql } from '../database/sql.js';

/**
 * Who may see and change a story: the one place that decides, in TypeScript and in SQL. The
 * rule is the facts' (facts/fact-visibility.ts): its author always; every other member while
 * it is shared. Owners and admins moderate what is shared (take it back to private, delete it)
 * and never see a member's private story.
 */
export function canSeeStory(
  story: { authorId: string; visibility: StoryVisibility },
  viewerId: string,
): boolean {
  return story.authorId === viewerId || story.visibility === StoryVisibility.SHARED;
}

/** The SQL predicate of canSeeStory over a `stories` row alias (a constant), for the viewer. */
export function storyVisibleSql(alias: string, viewerId: string): Sql {
  const a = raw(alias);
  return sql`(${a}.author_id = ${viewerId} OR ${a}.visibility = 'SHARED')`;
}

/**
 * Passages (`story_chunks` row `x`) of the legacy's stories the viewer may see, but those of a
 * story that could not be read: what search reads.
 */
export function storyPassageScopeSql(x: string, legacyId: string, viewerId: string): Sql {
  const a = raw(x);
  return sql`${a}.legacy_id = ${legacyId} AND EXISTS (
         SELECT 1 FROM stories st WHERE st.id = ${a}.story_id AND st.status <> 'FAILED'
            AND ${storyVisibleSql('st', viewerId)})`;
}

/** May this member take the story back to private or delete it? */
export function mayModerate(
  story: { authorId: string; visibility: StoryVisibility },
  viewerId: string,
  role: LegacyRole,
): boolean {
  if (story.authorId === viewerId) return true;
  return (
    story.visibility === StoryVisibility.SHARED &&
    (role === LegacyRole.OWNER || role === LegacyRole.ADMIN)
  );
}
