import { extractMemoriesHeuristic } from '../llm/heuristics/memory-patterns.js';
import { isMedicalOrFinancial } from '../llm/heuristics/text.js';
import { ConversationMode, MemorySource, MemoryType } from './memory.enums.js';

const DAY_MS = 86_400_000;

/** Something to remember, before duplicate and contradiction checks. */
export interface MemoryCandidate {
  type: MemoryType;
  content: string;
  confidence: number;
  source: MemorySource;
  conversationId?: string | null;
  sourceMessageId?: string | null;
  sourceTurnIndex?: number | null;
  conversationMode?: ConversationMode | null;
  validFrom?: Date | null;
}

/**
 * What Keepsake keeps about a user, whatever the model proposes: medical and financial claims
 * are capped below the default MEMORY_MIN_CONFIDENCE, so by default they are never saved
 * (the user can still save one with rememberThis).
 */
export const SENSITIVE_MEMORY_CAP = 0.4;

/** A proposed memory's confidence after the sensitive-claims cap. */
export function policyConfidence(content: string, confidence: number): number {
  return isMedicalOrFinancial(content) ? Math.min(confidence, SENSITIVE_MEMORY_CAP) : confidence;
}

/** A participant's consent in one conversation, as the ledger reads it. */
export interface MemoryConsent {
  remember: boolean;
  memoryPaused: boolean;
}

export type ConsentRefusal = 'MEMORY_PAUSED' | 'REMEMBER_OFF';

/** Why nothing may be remembered from a conversation for this participant now; null if it may. */
export function consentRefusal(consent: MemoryConsent | null): ConsentRefusal | null {
  if (consent?.memoryPaused) return 'MEMORY_PAUSED';
  // No row: a conversation deleted meanwhile has nothing to remember from either.
  if (!consent?.remember) return 'REMEMBER_OFF';
  return null;
}

/** Memories may come from the conversation for this participant now: extraction's gate. */
export function consents(consent: MemoryConsent | null): boolean {
  return consentRefusal(consent) === null;
}

/**
 * How long a forgotten memory stays restorable; the purge deletes it after that. Every undo
 * deadline (the one shown, the one restore checks, the purge's) is this one.
 */
export function undoWindowMs(undoDays: number): number {
  return undoDays * DAY_MS;
}

export function restorableUntil(forgottenAt: Date, undoDays: number): Date {
  return new Date(forgottenAt.getTime() + undoWindowMs(undoDays));
}

/** The text of a memory the user asks for, trimmed, or why it cannot be one. */
export function requestedContent(
  text: string | null | undefined,
  maxLength: number,
): { content: string } | { invalid: string } {
  const content = (text ?? '').trim();
  if (content.length === 0 || content.length > maxLength) {
    return { invalid: `A memory has 1 to ${maxLength} characters.` };
  }
  return { content };
}

/**
 * A memory the user asked for, in the API or in chat: saved at full confidence, since the user
 * said it and no model guessed it; typed as the heuristics read it unless the user chose.
 */
export function requestedMemory(
  content: string,
  source: MemorySource,
  type?: MemoryType | null,
): MemoryCandidate {
  return {
    type:
      type ??
      (extractMemoriesHeuristic({ userTurn: content })[0]?.type as MemoryType | undefined) ??
      MemoryType.FACT,
    content,
    confidence: 1,
    source,
  };
}
