import { classifyFacts, factFeatures, normalizeFact, stem, tidyFact } from './fact-relations.js';

const IGNORE = new Set(['joe', 'he', 'his', 'him', 'dad']);
const T = { duplicate: 0.85, related: 0.6 };
const rel = (newer: string, older: string, similarity: number | null = null) =>
  classifyFacts(factFeatures(newer, IGNORE), factFeatures(older, IGNORE), similarity, T)
    ?.relation ?? null;

describe('fact relations', () => {
  it('normalizes and tidies text', () => {
    expect(normalizeFact('  Joe’s  favourite song was "Moon River"! ')).toBe(
      'joes favourite song was moon river',
    );
    expect(tidyFact('joe loved fishing')).toBe('Joe loved fishing.');
    expect(stem('teaching')).toBe('teach');
    expect(stem('taught')).toBe('teach');
    expect(stem('stopped')).toBe('stop');
  });

  it('finds the same fact said again', () => {
    expect(rel('Joe loved fishing.', 'joe loved  fishing')).toBe('DUPLICATE');
    expect(
      rel('Joe really enjoyed fishing at the lake.', 'Joe loved fishing on the lake.', 0.918),
    ).toBe('DUPLICATE');
    expect(rel('Joe loved fishing.', 'Joe loved fishing on the lake.', 0.926)).toBe('DUPLICATE');
  });

  it('finds corrections', () => {
    // Near-identical vectors, but the two cannot both be true.
    expect(rel('Joe was born in Iowa.', 'Joe was born in Ohio.', 0.98)).toBe('CORRECTION');
    expect(rel('Joe was born in 1932.', 'Joe was born in Ohio in 1931.', 0.9)).toBe('CORRECTION');
    expect(rel('Joe hated jazz.', 'Joe loved jazz.', 0.875)).toBe('CORRECTION');
    expect(rel('Joe never smoked.', 'Joe smoked a pipe.', 0.7)).toBe('CORRECTION');
    expect(rel('Joe had four children.', 'Joe had three children.', 0.95)).toBe('CORRECTION');
    expect(rel("Joe's favourite song was Blue Moon.", "Joe's favourite song was Moon River.")).toBe(
      'CORRECTION',
    );
  });

  it('finds updates', () => {
    expect(rel('Joe retired from teaching in 1998.', 'Joe taught school.', 0.645)).toBe('UPDATE');
    expect(rel('Joe retired from teaching in 1998.', 'Joe taught school.', null)).toBe('UPDATE');
    expect(rel('Joe was born in Ohio in 1931.', 'Joe was born in Ohio.', 0.895)).toBe('UPDATE');
  });

  it('keeps unrelated facts apart', () => {
    expect(rel('Joe retired from the navy in 1970.', 'Joe taught school.', 0.504)).toBeNull();
    expect(
      rel('Joe played the piano at church.', 'Joe loved fishing on the lake.', 0.47),
    ).toBeNull();
    expect(rel('Joe loved the blues.', 'Joe loved jazz.', 0.9)).toBeNull();
    expect(
      rel('Joe kept chickens behind the house.', 'Joe kept bees behind the house.', 0.756),
    ).toBeNull();
    // Leaving a place does not undo being born there.
    expect(rel('Joe left Ohio in 1950.', 'Joe was born in Ohio.', 0.7)).toBeNull();
  });
});
