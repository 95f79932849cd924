import type { FactEntity, FactHistoryEntity } from './fact.entity.js';
import { FactAction, FactCategory, FactStatus, FactVisibility } from './fact.enums.js';
import {
  FAMILY_VIEWER,
  asSeenBy,
  canFindToRestore,
  canSee,
  historyEntryAsSeenBy,
  listViewer,
  seenByFamily,
  seesSources,
} from './fact-visibility.js';

const { PRIVATE, SHARED } = FactVisibility;
const { ACTIVE, SUPERSEDED, DELETED } = FactStatus;

const AUTHOR = 'author';
const MEMBER = 'member';
/** An owner or admin who deleted another member's fact. */
const DELETER = 'deleter';
const VIEWERS = { author: AUTHOR, member: MEMBER, family: FAMILY_VIEWER, deleter: DELETER };
type Viewer = keyof typeof VIEWERS;

function fact(visibility: FactVisibility, status: FactStatus): FactEntity {
  const at = (day: number) => new Date(Date.UTC(2026, 0, day));
  return {
    id: 'f1',
    legacyId: 'l1',
    authorId: AUTHOR,
    category: FactCategory.OTHER,
    content: 'Joe loved fishing.',
    normalized: 'joe loved fishing',
    visibility,
    status,
    confidence: 0.9,
    sharedConfidence: 0.6,
    mentionCount: 5,
    sharedMentionCount: 2,
    sourceConversationId: 'c1',
    sourceRangeStart: 0,
    sourceRangeEnd: 3,
    sourceMessageIds: ['m1'],
    validFrom: at(1),
    validTo: status === SUPERSEDED ? at(3) : null,
    supersededBy: status === SUPERSEDED ? 'f2' : null,
    deletedAt: status === DELETED ? at(4) : null,
    deletedBy: status === DELETED ? DELETER : null,
    createdAt: at(1),
    updatedAt: at(5),
    sharedUpdatedAt: at(2),
  };
}

/**
 * Who sees a fact, by its visibility and status: the author always, every other member (the
 * family's preview too) while it is shared and not deleted; whoever deleted a shared fact may
 * still find it to restore it.
 */
const SEES: [FactVisibility, FactStatus, Record<Viewer, boolean>, boolean, boolean][] = [
  // visibility, status, canSee by viewer, seenByFamily, deleter finds it to restore
  [PRIVATE, ACTIVE, { author: true, member: false, family: false, deleter: false }, false, false],
  [
    PRIVATE,
    SUPERSEDED,
    { author: true, member: false, family: false, deleter: false },
    false,
    false,
  ],
  [PRIVATE, DELETED, { author: true, member: false, family: false, deleter: false }, false, false],
  [SHARED, ACTIVE, { author: true, member: true, family: true, deleter: true }, true, true],
  [SHARED, SUPERSEDED, { author: true, member: true, family: true, deleter: true }, true, true],
  [SHARED, DELETED, { author: true, member: false, family: false, deleter: false }, false, true],
];

describe('fact visibility', () => {
  describe.each(SEES)('a %s %s fact', (visibility, status, sees, family, restorable) => {
    const f = fact(visibility, status);

    it.each(Object.keys(VIEWERS) as Viewer[])('is seen by the %s as the table says', (viewer) => {
      expect(canSee(f, VIEWERS[viewer])).toBe(sees[viewer]);
    });

    it('is seen by the family as the table says', () => {
      expect(seenByFamily(f)).toBe(family);
    });

    it('may be found to restore by whoever deleted it, as the table says', () => {
      expect(canFindToRestore(f, DELETER)).toBe(restorable);
      expect(canFindToRestore(f, AUTHOR)).toBe(true);
    });

    it('tells where it was said to its author alone', () => {
      expect(seesSources(f, AUTHOR)).toBe(true);
      for (const viewer of [MEMBER, FAMILY_VIEWER, DELETER])
        expect(seesSources(f, viewer)).toBe(false);
    });
  });

  /**
   * A superseded shared fact as another member sees it, by the fact that superseded it: the
   * supersession is theirs only while they can see that fact.
   */
  const SUPERSESSIONS: [
    string,
    { visibility: FactVisibility; status: FactStatus } | null,
    FactStatus,
  ][] = [
    ['no superseder any more', null, ACTIVE],
    ['a private superseder', { visibility: PRIVATE, status: ACTIVE }, ACTIVE],
    ['a shared superseder', { visibility: SHARED, status: ACTIVE }, SUPERSEDED],
    ['a shared superseder since deleted', { visibility: SHARED, status: DELETED }, ACTIVE],
    ['a private superseder since deleted', { visibility: PRIVATE, status: DELETED }, ACTIVE],
  ];

  describe.each(SUPERSESSIONS)('superseded, with %s', (_name, newer, othersSee) => {
    const f = fact(SHARED, SUPERSEDED);
    const superseder = newer && { authorId: AUTHOR, ...newer };

    it('is as stored for its author', () => {
      expect(asSeenBy(f, superseder, AUTHOR)).toEqual(f);
    });

    it.each([
      ['a member', MEMBER],
      ['the family preview', FAMILY_VIEWER],
    ])('shows %s the family values and the supersession as the table says', (_who, viewer) => {
      const seen = asSeenBy(f, superseder, viewer);
      expect(seen.status).toBe(othersSee);
      expect(seen.validTo).toEqual(othersSee === SUPERSEDED ? f.validTo : null);
      expect(seen.supersededBy).toBe(othersSee === SUPERSEDED ? 'f2' : null);
      expect(seen.mentionCount).toBe(f.sharedMentionCount);
      expect(seen.confidence).toBe(f.sharedConfidence);
      expect(seen.updatedAt).toEqual(f.sharedUpdatedAt);
    });
  });

  it.each([ACTIVE, DELETED])('shows others the family values of a shared %s fact', (status) => {
    const f = fact(SHARED, status);
    expect(asSeenBy(f, null, MEMBER)).toEqual({
      ...f,
      mentionCount: 2,
      confidence: 0.6,
      updatedAt: f.sharedUpdatedAt,
    });
  });

  function entry(over: Partial<FactHistoryEntity>): FactHistoryEntity {
    return {
      id: 'h1',
      factId: 'f1',
      action: FactAction.UPDATED,
      actorId: AUTHOR,
      content: 'Joe loved fishing.',
      category: FactCategory.OTHER,
      visibility: SHARED,
      status: ACTIVE,
      mentionCount: 5,
      sharedMentionCount: 2,
      relatedFactId: null,
      conversationId: null,
      detail: null,
      createdAt: new Date(0),
      ...over,
    };
  }

  /**
   * History entries as another member sees them: [entry, related fact visible, supersession
   * visible, what they see (null: nothing)].
   */
  const HISTORY: [
    string,
    Partial<FactHistoryEntity>,
    boolean,
    boolean,
    Partial<FactHistoryEntity> | null,
  ][] = [
    ['a shared change', {}, true, true, { mentionCount: 2, status: ACTIVE }],
    ['a change made while private', { visibility: PRIVATE }, true, true, null],
    ['a mention', { action: FactAction.MENTIONED }, true, true, null],
    ['one about a fact they cannot see', { relatedFactId: 'f9' }, false, true, null],
    ['one about a fact they can see', { relatedFactId: 'f9' }, true, true, { mentionCount: 2 }],
    ['a supersession they can see', { status: SUPERSEDED }, true, true, { status: SUPERSEDED }],
    ['a supersession they cannot see', { status: SUPERSEDED }, true, false, { status: ACTIVE }],
  ];

  it.each(HISTORY)(
    'shows others %s as the table says',
    (_name, over, related, supersession, seen) => {
      const e = entry(over);
      const forMember = historyEntryAsSeenBy(
        e,
        { authorId: AUTHOR },
        MEMBER,
        related,
        supersession,
      );
      expect(forMember).toEqual(seen && { ...e, mentionCount: 2, ...seen });
      expect(historyEntryAsSeenBy(e, { authorId: AUTHOR }, AUTHOR, related, supersession)).toBe(e);
    },
  );

  it('lists as the caller, or as the family when asked', () => {
    expect(listViewer(MEMBER, true)).toBe(FAMILY_VIEWER);
    expect(listViewer(MEMBER, false)).toBe(MEMBER);
    expect(listViewer(MEMBER, null)).toBe(MEMBER);
    expect(listViewer(MEMBER, undefined)).toBe(MEMBER);
  });
});
