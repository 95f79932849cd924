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
 * code questions, and for turns + neighbour x the best score of an adjacent turn. Ties break
 * on kind and id, so the order is deterministic.
 */
export function fuse(
  candidates: Candidate[],
  features: QueryFeatures,
  settings: SearchSettings,
): Ranked[] {
  const w = settings.weights;
  const identifier = candidates.map((c) => identifierMatch(features.identifiers, c.text));
  const identifierRank = rankBy(identifier);
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
    const time =
      features.timeRange && settings.time !== 'off'
        ? timeMatch(features.timeRange, c.occurredFrom ?? c.createdAt, c.occurredTo ?? c.createdAt)
        : 0;
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
      base,
      rrf,
    };
    return { candidate: c, components, score: base * timeFactor * (1 + code) };
  });

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
      const good =
        components.dense >= settings.goodHit ||
        c.coverage >= settings.goodHit ||
        components.trigram >= settings.goodHit ||
        (features.identifiers.length > 0 && components.identifier === 1);
      return { ...c, score: final, components, good };
    })
    .sort(compareRanked);
}

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
