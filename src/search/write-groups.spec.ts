import { writeGroups } from './segment-indexer.service.js';

describe('writeGroups', () => {
  const rows = (...turns: number[]) =>
    turns.flatMap((chunks, t) => Array.from({ length: chunks }, () => ({ messageId: `m${t}` })));

  it('groups whole turns of about the given size', () => {
    expect(writeGroups(rows(1, 1, 1, 1, 1), 2)).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    // A turn is never split, even past the size.
    expect(writeGroups(rows(1, 3, 1), 2)).toEqual([
      [0, 4],
      [4, 5],
    ]);
    expect(writeGroups(rows(5), 2)).toEqual([[0, 5]]);
    expect(writeGroups([], 2)).toEqual([]);
  });
});
