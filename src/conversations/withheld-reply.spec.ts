import {
  WITHHELD_REPLY,
  asReadBy,
  chunkWithheldFrom,
  deltaFor,
  seesGeneration,
  withheldFrom,
} from './withheld-reply.js';

const STARTER = 'starter';
const OTHER = 'other';
const VIEWERS = { 'its participant': STARTER, 'another participant': OTHER };
type Viewer = keyof typeof VIEWERS;

/** Turns by kind, and whether each viewer reads them: [turn, answeredAlone, reads by viewer]. */
const TURNS: [string, boolean, Record<Viewer, boolean>][] = [
  ['a member’s own turn', false, { 'its participant': true, 'another participant': true }],
  ['a reply made together', false, { 'its participant': true, 'another participant': true }],
  ['a reply made alone', true, { 'its participant': true, 'another participant': false }],
];

const turn = (answeredAlone: boolean) => ({
  answeredAlone,
  userId: STARTER,
  content: 'Your mother called you Bean.',
  tokenCount: 7,
  metadata: { items: ['memory:1'] },
});

describe('a reply made for one participant alone', () => {
  describe.each(TURNS)('%s', (_name, answeredAlone, reads) => {
    it.each(Object.keys(VIEWERS) as Viewer[])('is read by %s as the table says', (viewer) => {
      const t = turn(answeredAlone);
      expect(withheldFrom(t, VIEWERS[viewer])).toBe(!reads[viewer]);
      expect(asReadBy(t, VIEWERS[viewer])).toEqual(
        reads[viewer]
          ? t
          : { ...t, content: WITHHELD_REPLY, tokenCount: expect.any(Number), metadata: {} },
      );
    });

    it.each(Object.keys(VIEWERS) as Viewer[])(
      'withholds a summary covering it from %s as the table says',
      (viewer) => {
        expect(chunkWithheldFrom({ answeredAlone, userId: STARTER }, VIEWERS[viewer])).toBe(
          !reads[viewer],
        );
      },
    );

    it.each(Object.keys(VIEWERS) as Viewer[])('streams it to %s as the table says', (viewer) => {
      const delta = { answeredAlone, userId: STARTER, text: 'Bean' };
      expect(deltaFor(delta, VIEWERS[viewer])).toBe(reads[viewer] ? delta : null);
    });
  });

  it('counts the withheld text in tokens, not the reply’s', () => {
    const read = asReadBy(turn(true), OTHER);
    expect(read.tokenCount).toBeGreaterThan(0);
    expect(read.tokenCount).not.toBe(7);
  });

  it('withholds no summary that does not say it covers one', () => {
    expect(chunkWithheldFrom({ userId: STARTER }, OTHER)).toBe(false);
  });

  it.each(Object.keys(VIEWERS) as Viewer[])(
    'streams %s no piece that does not say whom it answers',
    (viewer) => {
      expect(deltaFor({ userId: STARTER, text: 'Bean' }, VIEWERS[viewer])).toBeNull();
    },
  );

  it.each([
    [STARTER, true],
    [OTHER, false],
  ])('shows what a reply was given to the participant it answered alone (%s)', (viewer, sees) => {
    expect(seesGeneration({ userId: STARTER }, viewer)).toBe(sees);
  });
});
