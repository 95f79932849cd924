/**
 * Scores of what a memory system writes against what people wrote about the same conversation
 * (LoCoMo's observations, session summaries and answers): token F1 as the LoCoMo paper and
 * SQuAD compute it, and ROUGE-L (longest common subsequence of tokens, F measure).
 */

/** Lower-cased words, without punctuation and articles (SQuAD's normalisation). */
export function answerTokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0 && !['a', 'an', 'the', 'and'].includes(w));
}

/** Token F1 of a prediction against a reference (bags of words, as the LoCoMo paper scores). */
export function tokenF1(prediction: string, reference: string): number {
  const p = answerTokens(prediction);
  const r = answerTokens(reference);
  if (p.length === 0 || r.length === 0) return p.length === r.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const w of r) counts.set(w, (counts.get(w) ?? 0) + 1);
  let shared = 0;
  for (const w of p) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      shared++;
      counts.set(w, n - 1);
    }
  }
  if (shared === 0) return 0;
  const precision = shared / p.length;
  const recall = shared / r.length;
  return (2 * precision * recall) / (precision + recall);
}

/** ROUGE-L F measure (beta 1) of a candidate against a reference. */
export function rougeL(candidate: string, reference: string): number {
  const c = answerTokens(candidate);
  const r = answerTokens(reference);
  if (c.length === 0 || r.length === 0) return 0;
  let previous = new Array<number>(r.length + 1).fill(0);
  for (let i = 1; i <= c.length; i++) {
    const row = new Array<number>(r.length + 1).fill(0);
    for (let j = 1; j <= r.length; j++) {
      row[j] = c[i - 1] === r[j - 1] ? previous[j - 1] + 1 : Math.max(previous[j], row[j - 1]);
    }
    previous = row;
  }
  const lcs = previous[r.length];
  if (lcs === 0) return 0;
  const precision = lcs / c.length;
  const recall = lcs / r.length;
  return (2 * precision * recall) / (precision + recall);
}

/** For each reference, the best score any candidate reaches (0 when there is none). */
export function bestOf(
  references: string[],
  candidates: string[],
  score: (candidate: string, reference: string) => number,
): number[] {
  return references.map((ref) => Math.max(0, ...candidates.map((c) => score(c, ref))));
}

export function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
