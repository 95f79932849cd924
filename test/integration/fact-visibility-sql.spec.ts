import { DataSource } from 'typeorm';
import type { FactEntity } from '../../src/facts/fact.entity.js';
import { FactCategory, FactStatus, FactVisibility } from '../../src/facts/fact.enums.js';
import {
  FAMILY_VIEWER,
  activeForSql,
  asSeenBy,
  canSee,
  familySeesSql,
  seenByFamily,
  sharedCountOnVisibilitySql,
  viewerColumnsSql,
  visibilityState,
  visibleSql,
} from '../../src/facts/fact-visibility.js';
import { startTestApp, TestApp } from '../support/test-app.js';
import { run, sql as tagged } from '../../src/database/sql.js';

const { PRIVATE, SHARED } = FactVisibility;
const { ACTIVE, SUPERSEDED, DELETED } = FactStatus;

const AUTHOR = '11111111-1111-4111-8111-111111111111';
const MEMBER = '22222222-2222-4222-8222-222222222222';
const VIEWERS = [AUTHOR, MEMBER, FAMILY_VIEWER];

let n = 0;
function fact(visibility: FactVisibility, status: FactStatus, supersededBy?: string): FactEntity {
  n += 1;
  const at = (day: number) => new Date(Date.UTC(2026, 0, day));
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    legacyId: '33333333-3333-4333-8333-333333333333',
    authorId: AUTHOR,
    category: FactCategory.OTHER,
    content: `Fact ${n}.`,
    normalized: `fact ${n}`,
    visibility,
    status,
    confidence: 0.75,
    sharedConfidence: 0.5,
    mentionCount: 5,
    sharedMentionCount: 2,
    sourceConversationId: null,
    sourceRangeStart: null,
    sourceRangeEnd: null,
    sourceMessageIds: [],
    validFrom: at(1),
    validTo: supersededBy ? at(3) : null,
    supersededBy: supersededBy ?? null,
    deletedAt: status === DELETED ? at(4) : null,
    deletedBy: status === DELETED ? MEMBER : null,
    createdAt: at(1),
    updatedAt: at(5),
    sharedUpdatedAt: at(2),
  };
}

/** Every visibility and status, and a superseded fact under every kind of superseder. */
function facts(): FactEntity[] {
  const all: FactEntity[] = [];
  for (const visibility of [PRIVATE, SHARED]) {
    for (const status of [ACTIVE, DELETED]) all.push(fact(visibility, status));
    for (const newerVisibility of [PRIVATE, SHARED]) {
      for (const newerStatus of [ACTIVE, DELETED]) {
        const newer = fact(newerVisibility, newerStatus);
        all.push(newer, fact(visibility, SUPERSEDED, newer.id));
      }
    }
    // Its superseder purged while a twin was active: still superseded, by no fact.
    all.push({ ...fact(visibility, SUPERSEDED, 'gone'), supersededBy: null });
  }
  return all;
}

/**
 * fact-visibility.ts's SQL fragments say what its TypeScript says, for every viewer (the
 * author, another member, the family's preview) and every state: evaluated by PostgreSQL over
 * rows of the facts table's own type (a CTE named `facts` stands in for the table).
 */
describe('fact visibility in SQL and TypeScript alike', () => {
  let t: TestApp;
  let ds: DataSource;
  const rows = facts();
  const byId = new Map(rows.map((f) => [f.id, f]));

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    // A file run alone migrates the template first.
  }, 120_000);
  afterAll(() => t.close());

  const columns = (f: FactEntity) => ({
    id: f.id,
    legacy_id: f.legacyId,
    author_id: f.authorId,
    category: f.category,
    content: f.content,
    normalized: f.normalized,
    visibility: f.visibility,
    status: f.status,
    confidence: f.confidence,
    shared_confidence: f.sharedConfidence,
    mention_count: f.mentionCount,
    shared_mention_count: f.sharedMentionCount,
    source_conversation_id: f.sourceConversationId,
    source_range_start: f.sourceRangeStart,
    source_range_end: f.sourceRangeEnd,
    source_message_ids: f.sourceMessageIds,
    valid_from: f.validFrom,
    valid_to: f.validTo,
    superseded_by: f.supersededBy,
    deleted_at: f.deletedAt,
    deleted_by: f.deletedBy,
    created_at: f.createdAt,
    updated_at: f.updatedAt,
    shared_updated_at: f.sharedUpdatedAt,
  });

  async function asSql(viewer: string) {
    const stored = JSON.stringify(rows.map(columns));
    return (await run(
      ds,
      tagged`WITH facts AS (SELECT * FROM json_populate_recordset(NULL::facts, ${stored}::json))
       SELECT ${viewerColumnsSql(viewer)}, ${visibleSql('f', viewer)} AS visible,
              ${familySeesSql('f')} AS family, ${activeForSql('f', viewer)} AS active
         FROM facts f ORDER BY f.id`,
    )) as (FactEntity & { visible: boolean; family: boolean; active: boolean })[];
  }

  it.each([
    ['the author', AUTHOR],
    ['another member', MEMBER],
    ['the family preview', FAMILY_VIEWER],
  ])('shows %s in SQL what canSee and asSeenBy show', async (_who, viewer) => {
    expect(VIEWERS).toContain(viewer);
    const sql = await asSql(viewer);
    expect(sql).toHaveLength(rows.length);
    for (const { visible, family, active, ...seenInSql } of sql) {
      const stored = byId.get(seenInSql.id)!;
      const newer = stored.supersededBy ? byId.get(stored.supersededBy) : undefined;
      expect({ id: stored.id, visible, family }).toEqual({
        id: stored.id,
        visible: canSee(stored, viewer),
        family: seenByFamily(stored),
      });
      // The one state where the two forms differ, left as it is: its author reads such a fact
      // as SUPERSEDED alone (asSeenBy) but as ACTIVE in lists (statusSql).
      if (viewer === AUTHOR && stored.status === SUPERSEDED && !stored.supersededBy) continue;
      if (!canSee(stored, viewer)) {
        expect(active).toBe(false);
        continue;
      }
      const seen = asSeenBy(stored, newer ? visibilityState(newer) : null, viewer);
      expect(seenInSql).toEqual(seen);
      expect(active).toBe(seen.status === ACTIVE);
    }
  });

  it.each([
    [SHARED, 5],
    [PRIVATE, 2],
  ])(
    'gives the family the author’s count when %s, what they saw before otherwise',
    async (v, count) => {
      const [{ count: sql }] = (await run(
        ds,
        tagged`SELECT ${sharedCountOnVisibilitySql(tagged`${v}`, tagged`5`, tagged`2`)} AS count`,
      )) as { count: number }[];
      expect(sql).toBe(count);
    },
  );
});
