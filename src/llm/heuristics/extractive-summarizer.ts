import { SummaryTurn } from '../language-model.js';
import {
  contentWords,
  isAboutAssistant,
  isLogistics,
  isQuestion,
  normalizeQuotes,
  splitSentences,
} from './text.js';

export interface SummarySentence {
  text: string;
  turnIndex: number;
  position: number;
}

/** The user knows the legacy; the assistant mostly reflects. Its sentences count for less. */
const ASSISTANT_WEIGHT = 0.5;
const MIN_WORDS = 5;

export function candidateSentences(turns: SummaryTurn[]): (SummarySentence & { role: string })[] {
  const out: (SummarySentence & { role: string })[] = [];
  for (const turn of turns) {
    for (const raw of splitSentences(turn.content)) {
      out.push({
        text: normalizeQuotes(raw),
        turnIndex: turn.turnIndex,
        position: out.length,
        role: turn.role,
      });
    }
  }
  return out;
}

export function summarySize(candidates: number): number {
  return Math.min(candidates, Math.max(2, Math.min(4, Math.ceil(candidates / 6))));
}

/**
 * HEURISTIC extractive summary: the 2-4 most central sentences of the span, verbatim, in their
 * original order. Centrality is the summed TF-IDF cosine similarity of a sentence to all the
 * others (degree centrality, as in LexRank), so the sentences that share the most vocabulary
 * with the rest of the span win. Deterministic: ties go to the earlier sentence.
 */
export function summarizeExtractive(turns: SummaryTurn[]): SummarySentence[] {
  const all = candidateSentences(turns);
  let pool = all.filter(
    (s) =>
      s.text.split(/\s+/).length >= MIN_WORDS &&
      !isQuestion(s.text) &&
      !isLogistics(s.text) &&
      !(s.role === 'USER' && isAboutAssistant(s.text)),
  );
  // A span of greetings and questions still gets a summary: its longest sentences.
  if (pool.length === 0) {
    pool = [...all]
      .sort((a, b) => b.text.length - a.text.length || a.position - b.position)
      .slice(0, 2);
  }
  const k = summarySize(pool.length);
  const vectors = tfidf(pool.map((s) => contentWords(s.text)));
  const scores = pool.map((s, i) => {
    let sum = 0;
    for (let j = 0; j < pool.length; j++) if (j !== i) sum += dot(vectors[i], vectors[j]);
    return sum * (s.role === 'ASSISTANT' ? ASSISTANT_WEIGHT : 1);
  });
  return pool
    .map((s, i) => ({ s, score: scores[i] }))
    .sort((a, b) => b.score - a.score || a.s.position - b.s.position)
    .slice(0, k)
    .map(({ s }) => ({ text: s.text, turnIndex: s.turnIndex, position: s.position }))
    .sort((a, b) => a.position - b.position);
}

type SparseVector = Map<string, number>;

/** Unit-length TF-IDF vectors, with smoothed IDF computed over the span's own sentences. */
function tfidf(docs: string[][]): SparseVector[] {
  const df = new Map<string, number>();
  for (const doc of docs) for (const w of new Set(doc)) df.set(w, (df.get(w) ?? 0) + 1);
  const n = docs.length;
  return docs.map((doc) => {
    const tf = new Map<string, number>();
    for (const w of doc) tf.set(w, (tf.get(w) ?? 0) + 1);
    const v: SparseVector = new Map();
    let norm = 0;
    for (const [w, count] of tf) {
      const weight = count * (Math.log((n + 1) / ((df.get(w) ?? 0) + 1)) + 1);
      v.set(w, weight);
      norm += weight * weight;
    }
    norm = Math.sqrt(norm) || 1;
    for (const [w, weight] of v) v.set(w, weight / norm);
    return v;
  });
}

function dot(a: SparseVector, b: SparseVector): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let sum = 0;
  for (const [w, x] of small) {
    const y = large.get(w);
    if (y !== undefined) sum += x * y;
  }
  return sum;
}
