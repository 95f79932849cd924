import { visibilityChanger } from './moderation.js';

describe('who may change who sees a member’s item', () => {
  it.each([
    ['its author shares it', 'ann', true, 'author'],
    ['its author takes it back', 'ann', false, 'author'],
    ['another member shares it', 'ben', true, 'refused'],
    ['another member takes it back (if they manage the legacy)', 'ben', false, 'moderator'],
  ])('%s', (_name, actor, toShared, changer) => {
    expect(visibilityChanger({ authorId: 'ann' }, actor as string, toShared as boolean)).toBe(
      changer,
    );
  });
});
