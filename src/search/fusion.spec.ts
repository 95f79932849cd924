import { fuse, mergeCandidates, mergeRankings, questionShare, STANDING_RAISED } from './fusion.js';
import type { SearchSettings } from './search.config.js';
import type { Candidate, QueryFeatures } from './search.types.js';

const SETTINGS: SearchSettings = {
  hybrid: true,
  fusion: 'weighted',
  weights: {
    dense: 0.7,
    lexical: 0.3,
    identifier: 0.25,
    time: 0.3,
    neighbor: 0,
    summary: 1,
    speaker: 0,
    standing: 0,
  },
  questionPenalty: 0,
  agentPenalty: 0,
  rrfK: 60,
  time: 'boost',
  candidates: 100,
  goodHit: 0.5,
  minGoodHits: 3,
  codeBoost: 0.5,
  bm25: { k1: 0.9, b: 0.4, contextWeight: 0.4, kindWeight: 0.5 },
};

const FEATURES: QueryFeatures = {
  text: 'q',
  identifiers: [],
  code: false,
  refersBack: false,
  asksSummary: false,
  timeRange: null,
  clock: new Date('2024-05-15T00:00:00Z'),
};

function candidate(id: string, over: Partial<Candidate> = {}): Candidate {
  return {
    kind: 'segment',
    id,
    scope: 'current',
    paths: {},
    coverage: 0,
    text: `text of ${id}`,
    conversationId: 'c1',
    turnStart: 0,
    turnEnd: 0,
    messageId: `m-${id}`,
    position: 0,
    isCode: false,
    tokens: 5,
    occurredFrom: new Date('2024-01-01T00:00:00Z'),
    occurredTo: new Date('2024-01-01T00:00:00Z'),
    createdAt: new Date('2024-01-01T00:00:00Z'),
    ownerId: 'u1',
    label: 'USER',
    sourceMessageIds: [],
    speaker: null,
    caption: null,
    ...over,
  };
}

describe('fuse (weighted)', () => {
  it('scores a x dense + b x lexical_norm + c x identifier match', () => {
    const ranked = fuse(
      [
        candidate('a', {
          paths: { dense: { score: 0.8, rank: 1 }, lexical: { score: 0.5, rank: 2 } },
        }),
        candidate('b', {
          paths: { dense: { score: 0.4, rank: 2 }, lexical: { score: 1, rank: 1 } },
        }),
      ],
      FEATURES,
      SETTINGS,
    );
    expect(ranked.map((r) => r.id)).toEqual(['a', 'b']);
    expect(ranked[0].score).toBeCloseTo(0.7 * 0.8 + 0.3 * 0.5, 10);
    expect(ranked[1].score).toBeCloseTo(0.7 * 0.4 + 0.3 * 1, 10);
    expect(ranked[0].components).toMatchObject({ dense: 0.8, lexical: 0.5, base: ranked[0].score });
  });

  it('uses the trigram similarity where full-text search found nothing', () => {
    const [r] = fuse(
      [candidate('a', { paths: { trigram: { score: 0.9, rank: 1 } } })],
      FEATURES,
      SETTINGS,
    );
    expect(r.score).toBeCloseTo(0.3 * 0.9, 10);
    expect(r.components.trigram).toBe(0.9);
  });

  it('adds identifier matches, found verbatim in the text', () => {
    const features = { ...FEATURES, identifiers: ['parseDate', 'utils.ts'] };
    const ranked = fuse(
      [
        candidate('plain', { paths: { dense: { score: 0.5, rank: 1 } } }),
        candidate('match', {
          paths: { dense: { score: 0.45, rank: 2 } },
          text: 'we changed parseDate in utils.ts',
        }),
      ],
      features,
      SETTINGS,
    );
    expect(ranked[0].id).toBe('match');
    expect(ranked[0].components.identifier).toBe(1);
    expect(ranked[0].good).toBe(true);
  });

  it('boosts items said in the named period and code chunks on code questions', () => {
    const features: QueryFeatures = {
      ...FEATURES,
      code: true,
      timeRange: {
        from: new Date('2024-05-06T00:00:00Z'),
        to: new Date('2024-05-13T00:00:00Z'),
        expression: 'last week',
      },
    };
    const inWeek = new Date('2024-05-08T00:00:00Z');
    const ranked = fuse(
      [
        candidate('old', { paths: { dense: { score: 0.6, rank: 1 } } }),
        candidate('week', {
          paths: { dense: { score: 0.5, rank: 2 } },
          occurredFrom: inWeek,
          occurredTo: inWeek,
        }),
        candidate('code', { paths: { dense: { score: 0.45, rank: 3 } }, isCode: true }),
      ],
      features,
      SETTINGS,
    );
    const byId = Object.fromEntries(ranked.map((r) => [r.id, r]));
    expect(byId.week.score).toBeCloseTo(0.7 * 0.5 * 1.3, 10);
    expect(byId.week.components.time).toBe(1);
    expect(byId.code.score).toBeCloseTo(0.7 * 0.45 * 1.5, 10);
    expect(byId.old.score).toBeCloseTo(0.7 * 0.6, 10);
    expect(ranked.map((r) => r.id)).toEqual(['code', 'week', 'old']);
  });

  it('does not boost by time when time handling is off', () => {
    const features: QueryFeatures = {
      ...FEATURES,
      timeRange: { from: new Date('2023-12-31'), to: new Date('2024-01-02'), expression: 'x' },
    };
    const [r] = fuse([candidate('a', { paths: { dense: { score: 0.5, rank: 1 } } })], features, {
      ...SETTINGS,
      time: 'off',
    });
    expect(r.score).toBeCloseTo(0.35, 10);
    expect(r.components.time).toBe(0);
  });

  it('adds a share of the best adjacent turn score', () => {
    const settings = { ...SETTINGS, weights: { ...SETTINGS.weights, neighbor: 0.5 } };
    const ranked = fuse(
      [
        candidate('t1', { turnStart: 1, paths: { dense: { score: 0.2, rank: 3 } } }),
        candidate('t2', { turnStart: 2, paths: { dense: { score: 0.9, rank: 1 } } }),
        candidate('t9', { turnStart: 9, paths: { dense: { score: 0.3, rank: 2 } } }),
        candidate('other', {
          turnStart: 3,
          conversationId: 'c2',
          paths: { dense: { score: 0.2, rank: 4 } },
        }),
      ],
      FEATURES,
      settings,
    );
    const byId = Object.fromEntries(ranked.map((r) => [r.id, r]));
    expect(byId.t1.score).toBeCloseTo(0.7 * 0.2 + 0.5 * 0.7 * 0.9, 10);
    expect(byId.t1.components.neighbor).toBeCloseTo(0.7 * 0.9, 10);
    // Another conversation's turn 3 is not turn 2's neighbour.
    expect(byId.other.components.neighbor).toBe(0);
    expect(byId.t9.components.neighbor).toBe(0);
  });

  it('fits a turn to the period by when it was said or by the period it tells of', () => {
    const dense = { dense: { score: 0.5, rank: 1 } };
    const ranked = fuse(
      [
        // Said on Monday 13 May about the Friday before: 10 May.
        candidate('told', {
          paths: dense,
          text: 'I finished my screenplay last Friday!',
          occurredFrom: new Date('2024-05-13T12:00:00Z'),
          occurredTo: new Date('2024-05-13T12:00:00Z'),
          toldFrom: new Date('2024-05-10T00:00:00Z'),
          toldTo: new Date('2024-05-11T00:00:00Z'),
        }),
        candidate('plain', {
          paths: dense,
          text: 'I finished my screenplay!',
          occurredFrom: new Date('2024-05-13T12:00:00Z'),
          occurredTo: new Date('2024-05-13T12:00:00Z'),
        }),
      ],
      {
        ...FEATURES,
        timeRange: {
          from: new Date('2024-05-10T00:00:00Z'),
          to: new Date('2024-05-11T00:00:00Z'),
          expression: '10 May',
        },
      },
      SETTINGS,
    );
    expect(ranked.map((r) => [r.id, r.components.time])).toEqual([
      ['told', 1],
      ['plain', 0],
    ]);
  });

  it('boosts turns by a speaker the query names, unless it names everyone', () => {
    const dense = { dense: { score: 0.5, rank: 1 } };
    const turns = [
      candidate('asks', { paths: dense, speaker: 'Caroline', text: 'Mel, you went camping?' }),
      candidate('tells', { paths: dense, speaker: 'Melanie', text: 'We camped at the beach.' }),
    ];
    const settings = { ...SETTINGS, weights: { ...SETTINGS.weights, speaker: 0.5 } };
    const ranked = fuse(
      turns,
      { ...FEATURES, text: "Where has Melanie's family camped?" },
      settings,
    );
    expect(ranked.map((r) => [r.id, r.components.speaker])).toEqual([
      ['tells', 1],
      ['asks', 0],
    ]);
    expect(ranked[0].score).toBeCloseTo(0.7 * 0.5 * 1.5, 10);
    const both = fuse(turns, { ...FEATURES, text: 'Did Caroline and Melanie camp?' }, settings);
    expect(both.map((r) => r.components.speaker)).toEqual([0, 0]);
  });

  it('lowers turns by the share of their text that asks, after neighbours took theirs', () => {
    const settings = {
      ...SETTINGS,
      weights: { ...SETTINGS.weights, neighbor: 0.5 },
      questionPenalty: 0.2,
    };
    const ranked = fuse(
      [
        candidate('q', {
          paths: { dense: { score: 0.8, rank: 1 } },
          text: 'Where did you go camping?',
          turnStart: 1,
          turnEnd: 1,
        }),
        candidate('a', {
          paths: { dense: { score: 0.6, rank: 2 } },
          text: 'To the beach, with the kids.',
          turnStart: 2,
          turnEnd: 2,
        }),
      ],
      FEATURES,
      settings,
    );
    const q = ranked.find((r) => r.id === 'q')!;
    const a = ranked.find((r) => r.id === 'a')!;
    expect(q.components.question).toBe(1);
    expect(a.components.question).toBe(0);
    expect(q.score).toBeCloseTo((0.7 * 0.8 + 0.5 * 0.7 * 0.6) * 0.8, 10);
    // The answer keeps the credit of the question it follows.
    expect(a.score).toBeCloseTo(0.7 * 0.6 + 0.5 * 0.7 * 0.8, 10);
  });

  it("lowers the agent's own turns (not an imported dialogue's people) and summaries", () => {
    const dense = { dense: { score: 0.5, rank: 1 } };
    const settings = {
      ...SETTINGS,
      weights: { ...SETTINGS.weights, summary: 0.5 },
      agentPenalty: 0.3,
    };
    const ranked = fuse(
      [
        candidate('member', { paths: dense, label: 'USER' }),
        candidate('agent', { paths: dense, label: 'ASSISTANT' }),
        candidate('labelled', { paths: dense, label: 'ASSISTANT', speaker: 'Assistant' }),
        candidate('person', { paths: dense, label: 'ASSISTANT', speaker: 'Melanie' }),
        candidate('summary', { paths: dense, kind: 'summary', label: null }),
      ],
      FEATURES,
      settings,
    );
    const score = (id: string) => ranked.find((r) => r.id === id)!.score;
    expect(score('member')).toBeCloseTo(0.35, 10);
    expect(score('person')).toBeCloseTo(0.35, 10);
    expect(score('agent')).toBeCloseTo(0.35 * 0.7, 10);
    expect(score('labelled')).toBeCloseTo(0.35 * 0.7, 10);
    expect(score('summary')).toBeCloseTo(0.35 * 0.5, 10);
    expect(ranked.find((r) => r.id === 'agent')!.components.agent).toBe(1);
  });

  it("keeps the agent's turns at full score when the query asks for a summary", () => {
    const dense = { dense: { score: 0.5, rank: 1 } };
    const settings = { ...SETTINGS, agentPenalty: 0.3 };
    const agent = (features: QueryFeatures) =>
      fuse([candidate('agent', { paths: dense, label: 'ASSISTANT' })], features, settings)[0];
    expect(agent(FEATURES).score).toBeCloseTo(0.35 * 0.7, 10);
    expect(agent({ ...FEATURES, asksSummary: true }).score).toBeCloseTo(0.35, 10);
  });

  it('raises the best matching standing instructions found, not every one', () => {
    const settings = { ...SETTINGS, weights: { ...SETTINGS.weights, standing: 0.5 } };
    const at = (score: number, standing: boolean): Candidate['paths'] => ({
      dense: { score, rank: 1 },
      ...(standing ? { standing: { score: 1, rank: 1 } } : {}),
    });
    const ranked = fuse(
      [
        candidate('told', { paths: at(0.6, false) }),
        candidate('best', { paths: at(0.5, true) }),
        candidate('second', { paths: at(0.4, true) }),
        candidate('unrelated', { paths: at(0.1, true) }),
      ],
      FEATURES,
      settings,
    );
    expect(STANDING_RAISED).toBe(2);
    const of = (id: string) => ranked.find((r) => r.id === id)!;
    expect(of('best').score).toBeCloseTo(0.7 * 0.5 * 1.5, 10);
    expect(of('second').score).toBeCloseTo(0.7 * 0.4 * 1.5, 10);
    expect(of('unrelated').score).toBeCloseTo(0.7 * 0.1, 10);
    expect(of('told').components.standing).toBe(0);
    expect(of('unrelated').components.standing).toBe(0);
    expect(ranked.map((r) => r.id)).toEqual(['best', 'told', 'second', 'unrelated']);
    // At weight 0 nothing moves.
    const off = fuse([candidate('best', { paths: at(0.5, true) })], FEATURES, SETTINGS);
    expect(off[0].score).toBeCloseTo(0.35, 10);
  });

  it('measures how much of a turn asks', () => {
    expect(questionShare('Where did you go?')).toBe(1);
    expect(questionShare('We went to the beach.')).toBe(0);
    // A long question tells as it asks.
    expect(
      questionShare(
        "I've never met Kelly at any book club or library event, which is weird because I thought we would have crossed paths by now, do you think I should try?",
      ),
    ).toBe(0);
    const share = questionShare('That sounds wonderful, I am so happy for you! Where was it?');
    expect(share).toBeGreaterThan(0.1);
    expect(share).toBeLessThan(0.5);
  });

  it('marks good hits by cosine, full-text coverage or trigram similarity', () => {
    const ranked = fuse(
      [
        candidate('dense', { paths: { dense: { score: 0.55, rank: 1 } } }),
        candidate('covered', { coverage: 0.6, paths: { lexical: { score: 1, rank: 1 } } }),
        candidate('weak', { coverage: 0.2, paths: { dense: { score: 0.3, rank: 2 } } }),
      ],
      FEATURES,
      SETTINGS,
    );
    expect(Object.fromEntries(ranked.map((r) => [r.id, r.good]))).toEqual({
      dense: true,
      covered: true,
      weak: false,
    });
  });

  it('breaks ties on kind and id, so the order is deterministic', () => {
    const same = { paths: { dense: { score: 0.5, rank: 1 } } };
    const ids = fuse(
      [candidate('b', same), candidate('a', same), candidate('c', same)],
      FEATURES,
      SETTINGS,
    ).map((r) => r.id);
    expect(ids).toEqual(['a', 'b', 'c']);
  });
});

describe('fuse (rrf)', () => {
  it('sums weight / (k + rank) over the paths', () => {
    const settings: SearchSettings = { ...SETTINGS, fusion: 'rrf' };
    const ranked = fuse(
      [
        candidate('both', {
          paths: { dense: { score: 0.3, rank: 2 }, lexical: { score: 0.5, rank: 1 } },
        }),
        candidate('dense', { paths: { dense: { score: 0.9, rank: 1 } } }),
      ],
      FEATURES,
      settings,
    );
    expect(ranked[0].id).toBe('both');
    expect(ranked[0].score).toBeCloseTo(0.7 / 62 + 0.3 / 61, 12);
    expect(ranked[0].components.rrf).toBeCloseTo(ranked[0].score, 12);
    expect(ranked[1].score).toBeCloseTo(0.7 / 61, 12);
  });
});

describe('mergeCandidates', () => {
  it('merges one item found by several paths and scopes, keeping the best hit per path', () => {
    const merged = mergeCandidates([
      [
        candidate('a', {
          scope: 'wider',
          paths: { dense: { score: 0.4, rank: 3 } },
          coverage: 0.1,
        }),
      ],
      [
        candidate('a', {
          paths: { dense: { score: 0.6, rank: 1 }, lexical: { score: 1, rank: 1 } },
          coverage: 0.7,
        }),
        candidate('b', { kind: 'summary' }),
        candidate('a', { kind: 'summary' }),
      ],
    ]);
    expect(merged).toHaveLength(3);
    const a = merged.find((c) => c.kind === 'segment' && c.id === 'a')!;
    expect(a.paths).toEqual({ dense: { score: 0.6, rank: 1 }, lexical: { score: 1, rank: 1 } });
    expect(a.coverage).toBe(0.7);
    expect(a.scope).toBe('current');
  });
});

describe('mergeRankings', () => {
  it('keeps each item once, at the best score any ranking gave it', () => {
    const [a, b, c] = fuse(
      [
        candidate('a', { paths: { dense: { score: 0.9, rank: 1 } } }),
        candidate('b', { paths: { dense: { score: 0.5, rank: 2 } } }),
        candidate('c', { paths: { dense: { score: 0.1, rank: 3 } } }),
      ],
      FEATURES,
      SETTINGS,
    );
    const merged = mergeRankings([
      [a, b],
      [
        { ...c, score: 0.95 },
        { ...a, score: 0.2 },
      ],
    ]);
    expect(merged.map((r) => [r.id, r.score])).toEqual([
      ['c', 0.95],
      ['a', a.score],
      ['b', b.score],
    ]);
  });
});
