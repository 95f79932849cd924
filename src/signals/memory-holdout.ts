import { createHash } from 'node:crypto';

/**
 * The A/B arm of a conversation: in the holdout (no memory block) when its hash falls under the
 * share. A hash, not a coin flip, so that every reply of a conversation is in the same arm on
 * every instance, and raising the share only moves conversations into the holdout.
 */
export function inMemoryHoldout(conversationId: string, share: number): boolean {
  if (share <= 0) return false;
  if (share >= 1) return true;
  const digest = createHash('sha256').update(`memory-ab:${conversationId}`).digest();
  return digest.readUInt32BE(0) / 0x1_0000_0000 < share;
}
