import { identifierMatch } from './query-analysis.js';
import type { SearchSettings } from './search.config.js';
import type {
  Candidate,
  PathName,
  QueryFeatures,
  Ranked,
  ScoreComponents,
} from './search.types.js';
import { timeMatch } from './time-expressions.js';
import type { TimeRange } from './time-expressions.js';

/** Merges hits of the same item found by several paths (and scopes) into one candidate. */
export function mergeCandidates(lists: Candidate[][]): Candidate[] {
  const byKey = new Map<string, Candidate>();
  for (const list of lists) {
    for (const c of list) {
      const key = `${c.kind}:${c.id}`;
      const seen = byKey.get(key);
      if (!seen) {
        byKey.set(key, { ...c, paths: { ...c.paths } });
        continue;
      }
      for (const [path, hit] of Object.entries(c.paths) as [
        PathName,
        Candidate['paths'][PathName],
      ][]) {
        const current = seen.paths[path];
        if (hit && (!current || hit.score > current.score)) seen.paths[path] = hit;
      }
      seen.coverage = Math.max(seen.coverage, c.coverage);
      if (c.scope === 'current') seen.scope = 'current';
    }
  }
  return [...byKey.values()];
}

/**
 * Rankings of the same items for several queries (a question and its parts) as one: each item
 * at the best score any of them gave it, components and all.
 */
export function mergeRankings(rankings: Ranked[][]): Ranked[] {
  const best = new Map<string, Ranked>();
  for (const ranking of rankings) {
    for (const r of ranking) {
      const key = `${r.kind}:${r.id}`;
      const seen = best.get(key);
      if (!seen || r.score > seen.score) best.set(key, r);
    }
  }
  return [...best.values()].sort(compareRanked);
}

function compareRanked(a: Ranked, b: Ranked): number {
  if (b.score !== a.score) return b.score - a.score;
  const ka = `${a.kind}:${a.id}`;
  const kb = `${b.kind}:${b.id}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * One ranking from the paths' hits:
 * - weighted: dense x cosine + lexical x max(normalized full-text rank, trigram similarity)
 *   + identifier x identifier match;
 * - rrf: the sum over paths of weight / (k + rank), identifier matches ranked as a path and
 *   full-text and trigram counted as one (the better rank).
 * Then x (1 + time x time match) for a time expression, x (1 + code boost) for code chunks on
 * code questions, and for turns + neighbour x the best score of an adjacent turn. Last, summaries
 * x summary weight, and turns x (1 + speaker weight) when by someone the query names,
 * x (1 - question penalty x the share of the turn that asks) and x (1 - agent penalty) when the
 * agent wrote them (not when the query asks for a summary), and the best STANDING_RAISED of
 * the member's standing instructions and preferences found (standing.ts) x (1 + standing
 * weight). Ties break on kind and id, so the order is deterministic.
 */
export function fuse(
  candidates: Candidate[],
  features: QueryFeatures,
  settings: SearchSettings,
): Ranked[] {
  const w = settings.weights;
  const identifier = candidates.map((c) => identifierMatch(features.identifiers, c.text));
  const identifierRank = rankBy(identifier);
  const named = namedSpeakers(candidates, features.text);
  // Asked to sum up what was discussed, the member wants the agent's side of it as well.
  const agentPenalty = features.asksSummary ? 0 : settings.agentPenalty;
  const boosted = candidates.map((c, i) => {
    const dense = c.paths.dense?.score ?? 0;
    const lexical = c.paths.lexical?.score ?? 0;
    const trigram = c.paths.trigram?.score ?? 0;
    let rrf = 0;
    if (settings.fusion === 'rrf') {
      const term = (weight: number, rank: number | undefined) =>
        rank === undefined ? 0 : weight / (settings.rrfK + rank);
      // Full-text and its trigram stand-in are one path: the better rank counts.
      const textRank = Math.min(
        c.paths.lexical?.rank ?? Infinity,
        c.paths.trigram?.rank ?? Infinity,
      );
      rrf =
        term(w.dense, c.paths.dense?.rank) +
        term(w.lexical, Number.isFinite(textRank) ? textRank : undefined) +
        term(w.identifier, identifierRank[i]);
    }
    const base =
      settings.fusion === 'rrf'
        ? rrf
        : w.dense * dense + w.lexical * Math.max(lexical, trigram) + w.identifier * identifier[i];
    const time = features.timeRange && settings.time !== 'off' ? timeFit(features.timeRange, c) : 0;
    const code = features.code && c.isCode ? settings.codeBoost : 0;
    const timeFactor = settings.time === 'boost' ? 1 + w.time * time : 1;
    const components: ScoreComponents = {
      dense,
      lexical,
      trigram,
      identifier: identifier[i],
      time,
      code,
      neighbor: 0,
      speaker: c.kind === 'segment' && c.speaker !== null && named.has(c.speaker) ? 1 : 0,
      question: c.kind === 'segment' ? questionShare(c.text) : 0,
      agent: isAgentTurn(c) ? 1 : 0,
      standing: 0,
      base,
      rrf,
    };
    return { candidate: c, components, score: base * timeFactor * (1 + code) };
  });

  // A request is governed by the standing instructions about its subject, not by all of them.
  boosted
    .filter((b) => b.candidate.paths.standing)
    .sort((a, b) => b.score - a.score || (a.candidate.id < b.candidate.id ? -1 : 1))
    .slice(0, STANDING_RAISED)
    .forEach((b) => (b.components.standing = 1));

  // Turns are scored with their neighbours: a turn next to a strong one is likely relevant.
  const byTurn = new Map<string, number>();
  for (const b of boosted) {
    const c = b.candidate;
    if (c.kind !== 'segment' || c.turnStart === null) continue;
    const key = `${c.conversationId}:${c.turnStart}`;
    byTurn.set(key, Math.max(byTurn.get(key) ?? 0, b.score));
  }
  return boosted
    .map(({ candidate: c, components, score }) => {
      let final = score;
      if (c.kind === 'segment' && c.turnStart !== null && w.neighbor > 0) {
        const near = Math.max(
          byTurn.get(`${c.conversationId}:${c.turnStart - 1}`) ?? 0,
          byTurn.get(`${c.conversationId}:${c.turnStart + 1}`) ?? 0,
        );
        components.neighbor = near;
        final += w.neighbor * near;
      }
      // A summary stands for many turns: among them, the turns that match as well say where.
      if (c.kind === 'summary') final *= w.summary;
      // After the neighbours took their share: a question still points at its answer.
      final *=
        (1 + w.speaker * components.speaker) *
        (1 - settings.questionPenalty * components.question) *
        (1 - agentPenalty * components.agent) *
        (1 + w.standing * components.standing);
      const good =
        components.dense >= settings.goodHit ||
        c.coverage >= settings.goodHit ||
        components.trigram >= settings.goodHit ||
        (features.identifiers.length > 0 && components.identifier === 1);
      return { ...c, score: final, components, good };
    })
    .sort(compareRanked);
}

/**
 * Standing instructions and preferences raised per search: the best matching ones (measured on
 * BEAM's development half: one raised too few where a request falls under two, three let
 * unrelated ones into the first places).
 */
export const STANDING_RAISED = 2;

/** 1-based ranks of the positive values, best first; undefined for zeros. */
function rankBy(values: number[]): (number | undefined)[] {
  const order = values
    .map((v, i) => ({ v, i }))
    .filter((x) => x.v > 0)
    .sort((a, b) => b.v - a.v || a.i - b.i);
  const ranks: (number | undefined)[] = values.map(() => undefined);
  order.forEach((x, r) => (ranks[x.i] = r + 1));
  return ranks;
}

/**
 * How well an item fits the query's period: by when it was said, and for a turn also by the
 * time it tells of ("last Friday", "two weeks ago", "tomorrow"), read against when it was said.
 */
function timeFit(range: TimeRange, c: Candidate): number {
  const said = timeMatch(range, c.occurredFrom ?? c.createdAt, c.occurredTo ?? c.createdAt);
  if (!c.toldFrom || !c.toldTo) return said;
  // The told period is [from, to); timeMatch takes the last instant in it.
  return Math.max(said, timeMatch(range, c.toldFrom, new Date(c.toldTo.getTime() - 1)));
}

/**
 * Speakers of the candidate turns that the query names, as a word ("Mel", "Mel's"): the
 * speakers come from the turns themselves, so nothing is known about names beforehand.
 */
function namedSpeakers(candidates: Candidate[], query: string): Set<string> {
  // Compared without a final "s", so that "James" and "Mel's" (split at the apostrophe) match.
  const stem = (word: string) => word.replace(/s$/, '');
  const words = new Set((query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(stem));
  const named = new Set<string>();
  for (const c of candidates) {
    if (c.kind !== 'segment' || c.speaker === null || named.has(c.speaker)) continue;
    const first = c.speaker.toLowerCase().match(/[\p{L}\p{N}]+/u)?.[0];
    if (first && words.has(stem(first))) named.add(c.speaker);
  }
  // Naming everyone who speaks favours no one.
  const speakers = new Set(candidates.map((c) => c.speaker).filter((s) => s !== null));
  return named.size < speakers.size ? named : new Set();
}

/** A question this long tells something in its clauses ("I never met Kelly, should I...?"). */
const SHORT_QUESTION_WORDS = 15;

/** The share of a turn's text (by length) in short questions: what it asks, not tells. */
export function questionShare(text: string): number {
  const sentences = text.match(/[^.!?\n]+[.!?\n]*/g) ?? [];
  let asked = 0;
  let total = 0;
  for (const sentence of sentences.map((s) => s.trim())) {
    total += sentence.length;
    if (sentence.includes('?') && sentence.split(/\s+/).length <= SHORT_QUESTION_WORDS) {
      asked += sentence.length;
    }
  }
  return total > 0 ? asked / total : 0;
}

/** Speaker labels that name a role, not a person ("Assistant: ..." in an exported chat). */
export const ROLE_LABEL_NAMES = 'assistant|ai|bot|agent|chatbot|model|gpt|chatgpt|claude';
const ROLE_LABELS = new RegExp(`^(?:${ROLE_LABEL_NAMES})$`, 'i');

/** Written by the agent: an ASSISTANT turn without a person's name as its speaker. */
export function writtenByAgent(role: string | null, speaker: string | null): boolean {
  return role === 'ASSISTANT' && (speaker === null || ROLE_LABELS.test(speaker.trim()));
}

function isAgentTurn(c: Candidate): boolean {
  return c.kind === 'segment' && writtenByAgent(c.label, c.speaker);
}
