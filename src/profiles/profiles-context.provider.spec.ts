import type { UsableEntry } from './profile.repository.js';
import { denseLeader } from './profiles-context.provider.js';

function entry(field: UsableEntry['field'], similarity: number | null): UsableEntry {
  const at = new Date('2026-01-01T00:00:00Z');
  return {
    id: field,
    userId: 'u',
    field,
    legacyId: null,
    value: 'x',
    text: 'x',
    createdAt: at,
    updatedAt: at,
    similarity,
  };
}

describe('denseLeader', () => {
  it('picks the most similar entry when it is close enough and clearly ahead', () => {
    const leader = denseLeader(
      [entry('birthday', 0.21), entry('interests', 0.41), entry('languages', 0.14)],
      0.35,
    );
    expect(leader?.field).toBe('interests');
  });

  it('picks none when the best is not similar enough', () => {
    expect(denseLeader([entry('birthday', 0.33), entry('interests', 0.19)], 0.35)).toBeNull();
  });

  it('picks none when another entry is nearly as similar', () => {
    expect(denseLeader([entry('homeTown', 0.45), entry('notes', 0.39)], 0.35)).toBeNull();
  });

  it('takes a lone entry on similarity alone, and ignores entries without a vector', () => {
    expect(denseLeader([entry('notes', 0.5), entry('pronouns', null)], 0.35)?.field).toBe('notes');
    expect(denseLeader([entry('notes', null)], 0.35)).toBeNull();
  });
});
