import type { ModelOutputError } from './model.errors.js';
import type { ChatPrompt } from './prompts.js';

/**
 * How a structured task is asked again after an answer was refused. Asking the same thing
 * the same way gets the same refused answer from a real model (13 times in a row in issue 38),
 * so each further attempt changes what it asks: a higher temperature, another seed, and a note
 * naming what was wrong with the previous answer.
 */

/** Answers a structured task may get per call: the first and two repairs. */
export const OUTPUT_ATTEMPTS = 3;

export interface AttemptPlan {
  /** 1 for the first answer. */
  attempt: number;
  /** Unset on the first attempt: the provider's default (greedy for the embedded model). */
  temperature?: number;
  seed?: number;
  /** Told to the model after the input: why its previous answer was refused. */
  repair?: string;
}

export function attemptPlan(attempt: number, refused?: ModelOutputError): AttemptPlan {
  if (attempt <= 1 || !refused) return { attempt: 1 };
  const problems = (refused.problems.length > 0 ? refused.problems : [refused.message])
    .slice(0, 3)
    .map((p) => p.replace(/\s+/g, ' ').slice(0, 200));
  return {
    attempt,
    temperature: attempt === 2 ? 0.5 : 0.9,
    seed: 7919 * attempt,
    repair:
      `Your previous answer was refused: ${problems.join('; ')}. ` +
      'Answer again with one JSON object that fixes this, using only what the input above says.',
  };
}

export function withRepair(prompt: ChatPrompt, plan: AttemptPlan): ChatPrompt {
  return plan.repair ? { system: prompt.system, user: `${prompt.user}\n\n${plan.repair}` } : prompt;
}

/**
 * Token usage of every request one call made, refused and failed ones included: a server that
 * spent 28,952 prompt tokens on refused answers cost that much, whatever was kept.
 */
export class UsageMeter {
  promptTokens = 0;
  completionTokens = 0;
  /** Some request's counts came from the tokenizer (the server sent none). */
  estimated = false;

  add(usage: { promptTokens: number; completionTokens: number }, estimated = false): void {
    this.promptTokens += usage.promptTokens;
    this.completionTokens += usage.completionTokens;
    if (estimated) this.estimated = true;
  }
}

/** Most tokens each structured task may write: a repeated list stops here, not at the server's cap. */
export const TASK_MAX_TOKENS = {
  summarizeTurns: 1200,
  extractMemories: 400,
  summarizePeriod: 1000,
  rewriteQuery: 300,
} as const;
