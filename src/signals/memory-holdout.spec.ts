import { randomUUID } from 'node:crypto';
import { inMemoryHoldout } from './memory-holdout.js';

describe('inMemoryHoldout', () => {
  const ids = Array.from({ length: 4000 }, () => randomUUID());

  it('never holds out at 0 and always at 1', () => {
    expect(ids.some((id) => inMemoryHoldout(id, 0))).toBe(false);
    expect(ids.every((id) => inMemoryHoldout(id, 1))).toBe(true);
  });

  it('is stable for a conversation', () => {
    for (const id of ids.slice(0, 50)) {
      expect(inMemoryHoldout(id, 0.3)).toBe(inMemoryHoldout(id, 0.3));
    }
  });

  it('holds out about the share of conversations', () => {
    const held = ids.filter((id) => inMemoryHoldout(id, 0.2)).length / ids.length;
    expect(held).toBeGreaterThan(0.17);
    expect(held).toBeLessThan(0.23);
  });

  it('a larger share only adds conversations to the holdout', () => {
    for (const id of ids) {
      if (inMemoryHoldout(id, 0.1)) expect(inMemoryHoldout(id, 0.4)).toBe(true);
    }
  });
});
