import { bestOf, rougeL, tokenF1 } from '../../bench/extraction-scores.js';

describe('extraction scores', () => {
  it('computes token F1 as the LoCoMo paper does', () => {
    expect(tokenF1('The lake sunrise', 'a lake sunrise')).toBe(1);
    expect(tokenF1('painted a lake', 'lake sunrise painting')).toBeCloseTo(0.4, 5);
    expect(tokenF1('nothing', 'lake')).toBe(0);
  });

  it('computes ROUGE-L from the longest common subsequence', () => {
    // LCS 3 of 5 and 4 tokens ("a" aside): P 0.6, R 0.75.
    expect(
      rougeL('Caroline went to a support group', 'Caroline attended a support group'),
    ).toBeCloseTo(2 / 3, 5);
    expect(rougeL('', 'anything')).toBe(0);
  });

  it('takes each reference’s best candidate', () => {
    expect(bestOf(['lake sunrise', 'adoption'], ['a lake sunrise painting'], tokenF1)).toEqual([
      0.8, 0,
    ]);
  });
});
