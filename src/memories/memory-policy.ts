import { isMedicalOrFinancial } from '../llm/heuristics/text.js';

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
