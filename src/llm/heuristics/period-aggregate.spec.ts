import type { PeriodSource } from '../language-model.js';
import { summarizePeriodHeuristic } from './period-aggregate.js';

const source = (over: Partial<PeriodSource>): PeriodSource => ({
  kind: 'CHUNK',
  from: '2025-10-06',
  to: '2025-10-06',
  weight: 1,
  text: '',
  userTurns: [],
  themes: [],
  people: [],
  places: [],
  emotionalTone: null,
  patterns: [],
  conversationIds: ['c1'],
  ...over,
});

describe('summarizePeriodHeuristic (offline aggregate)', () => {
  it('counts, themes from what was said, recurring themes and the central sentences', () => {
    const out = summarizePeriodHeuristic({
      legacyName: 'Arthur',
      period: 'WEEK',
      start: '2025-10-06',
      end: '2025-10-12',
      conversationCount: 2,
      turnCount: 9,
      sources: [
        source({ text: 'Arthur grew runner beans in the allotment and we miss him terribly.' }),
        source({
          kind: 'TURNS',
          userTurns: ['The allotment shed still smells of his pipe tobacco and runner beans.'],
          conversationIds: ['c2'],
        }),
      ],
    });
    expect(out.summary).toContain('Looking back on the week of 2025-10-06 to 2025-10-12');
    expect(out.summary).toContain('2 conversations about Arthur, 9 turns');
    expect(out.keyThemes.slice(0, 3)).toEqual(
      expect.arrayContaining(['allotment', 'runner', 'bean']),
    );
    expect(out.keyThemes).not.toContain('arthur');
    expect(out.recurringPatterns).toContain('allotment came up in 2 conversations');
    expect(out.emotionalTone).toBe('mostly grief');
  });

  it('names the people, places and events that came up, not the words said most', () => {
    const out = summarizePeriodHeuristic({
      legacyName: 'Grandpa Joe',
      period: 'WEEK',
      start: '2025-10-06',
      end: '2025-10-12',
      conversationCount: 1,
      turnCount: 6,
      sources: [
        source({
          kind: 'TURNS',
          userTurns: [
            'Grandpa Joe drove us to Galway for the wedding of my cousin Mary.',
            'Afterwards we went on a trip to Lisbon, and he went climbing along the old red wall.',
            'The garden grew deep red roses along the wall.',
          ],
        }),
      ],
    });
    expect(out.people).toEqual(['Mary']);
    expect(out.places).toEqual(expect.arrayContaining(['Galway', 'Lisbon']));
    expect(out.keyThemes.slice(0, 3)).toEqual(['a trip to Lisbon', 'the wedding', 'climbing']);
    expect(out.keyThemes).not.toContain('along');
    expect(out.keyThemes).not.toContain('deep');
    expect(out.summary).toContain('People who came up: Mary.');
    expect(out.summary).toMatch(/Places: (Galway and Lisbon|Lisbon and Galway)\./);
    expect(out.summary).toContain('Talked about: a trip to Lisbon, the wedding, climbing');
    expect(out.emotionalTone).toBe('calm: no strong feelings named');
  });

  it('weighs a shorter period’s themes by their rank, and a partial week by its days', () => {
    const out = summarizePeriodHeuristic({
      legacyName: 'Arthur',
      period: 'MONTH',
      start: '2025-10-01',
      end: '2025-10-31',
      conversationCount: 3,
      turnCount: 20,
      sources: [
        source({ kind: 'WEEK', from: '2025-09-29', weight: 5 / 7, themes: ['conker', 'park'] }),
        source({ kind: 'WEEK', from: '2025-10-06', weight: 1, themes: ['conker', 'bonfire'] }),
        source({ kind: 'WEEK', from: '2025-10-27', weight: 5 / 7, themes: ['bonfire', 'conker'] }),
      ],
    });
    expect(out.keyThemes[0]).toBe('conker');
    expect(out.recurringPatterns[0]).toBe('conker came up in 3 weeks');
  });

  it('keeps how things were done out of the themes', () => {
    const out = summarizePeriodHeuristic({
      legacyName: 'Arthur',
      period: 'WEEK',
      start: '2025-10-06',
      end: '2025-10-12',
      conversationCount: 1,
      turnCount: 2,
      sources: [source({ text: 'He always quickly built the biggest bonfire and loved it.' })],
    });
    expect(out.keyThemes).toEqual(['bonfire']);
  });
});
