import { Logger } from '@nestjs/common';
import type { QueryVector } from '../embeddings/embedding.service.js';
import type { CandidateDetails, CandidateRepository } from './candidate.repository.js';
import { fuse, mergeCandidates } from './fusion.js';
import {
  hasCjk,
  lexemeQuery,
  queryWords,
  selectingLexemes,
  trigramProbes,
  websearchOr,
} from './query-analysis.js';
import type { SearchSettings } from './search.config.js';
import type {
  LexicalQuery,
  PathRow,
  ScopeName,
  ScopeParams,
  SearchRepository,
} from './search.repository.js';
import type { LexemeStats, ScopeStats, SearchStatsRepository } from './search-stats.repository.js';
import {
  Candidate,
  PATH_NAMES,
  PathName,
  QueryFeatures,
  Ranked,
  SourceKind,
} from './search.types.js';

export type Degradation = 'dense' | 'lexical';

/** A settled piece of work: its value, or what it failed with. */
type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

async function settle<T>(work: () => Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error };
  }
}

type Rows = Map<SourceKind, Partial<Record<PathName, Map<string, PathRow>>>>;

/** One scope being searched: what its paths found, and its failures, reported in order. */
interface ScopeSearch {
  scope: ScopeName;
  kinds: SourceKind[];
  rows: Rows;
  q: LexicalQuery | null;
  failures: [stage: string, error: unknown][];
}

export interface PathTimings {
  dense: number;
  lexical: number;
  trigram: number;
  fusion: number;
}

/** The state of one search: candidates found so far, by path and scope. */
export class SearchRun {
  private readonly logger = new Logger('Search');
  readonly degraded: Degradation[] = [];
  failedStage: string | null = null;
  fallback = false;
  readonly hits = Object.fromEntries(PATH_NAMES.map((p) => [p, 0])) as Record<PathName, number>;
  private readonly lists: Candidate[][] = [];
  private readonly details = new Map<string, CandidateDetails>();
  private lexicalOn = false;
  /** Until the statistics say otherwise, stories are searched. */
  private storiesPresent = true;
  /** Full-text hits over every scope searched so far (the trigram fallback's trigger). */
  private lexicalHits = 0;
  private lexemes: LexemeStats[] = [];
  private stats: ScopeStats | null = null;
  private keywords = '';
  readonly pathMs: PathTimings = { dense: 0, lexical: 0, trigram: 0, fusion: 0 };

  constructor(
    private readonly paths: SearchRepository,
    private readonly statistics: SearchStatsRepository,
    private readonly candidates: CandidateRepository,
    private readonly settings: SearchSettings,
    private readonly features: QueryFeatures,
    private readonly scope: ScopeParams,
  ) {}

  /** Runs `work` and adds its duration to the path's time (failed work counts too). */
  private async timed<T>(path: keyof PathTimings, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.pathMs[path] += performance.now() - started;
    }
  }

  degrade(what: Degradation): void {
    if (!this.degraded.includes(what)) this.degraded.push(what);
  }

  private fail(stage: string, err: unknown): void {
    this.failedStage ??= stage;
    this.logger.warn({ msg: 'search stage failed', stage, error: (err as Error).message });
  }

  async prepareLexical(on: boolean): Promise<void> {
    if (!on) return;
    try {
      const words = queryWords(this.features.text);
      const result = await this.timed('lexical', () =>
        this.statistics.lexemeStats(words.join(' '), this.scope, this.settings.bm25.contextWeight),
      );
      this.lexemes = result.lexemes;
      this.stats = result.stats;
      this.keywords = result.keywords;
      this.storiesPresent = result.hasStories;
      this.lexicalOn = true;
    } catch (err) {
      this.degrade('lexical');
      this.fail('lexical', err);
    }
  }

  /** The lexical query for a scope, with BM25 statistics of that scope. */
  private lexicalQuery(scope: ScopeName): LexicalQuery {
    const s = this.stats!;
    // Counts are kept for the current conversation and for all the user's own: 'wider' is all
    // but current when current is one of them (a together conversation another member started
    // is not, and counting it out made the counts negative). Never below nothing either way.
    const inScope = (current: number, all: number) =>
      Math.max(
        0,
        scope === 'current' ? current : scope === 'wider' && s.currentOwned ? all - current : all,
      );
    const known = this.lexemes
      .map((l) => ({ lexeme: l.lexeme, df: inScope(l.dfCurrent, l.dfAll) }))
      .filter((l) => l.df > 0);
    // No word is held by more turns than there are.
    const docs = Math.max(inScope(s.segmentsCurrent, s.segmentsAll), ...known.map((l) => l.df));
    const length = inScope(s.lengthCurrent, s.lengthAll);
    const keywordList = queryWords(this.keywords);
    const selecting = new Set(selectingLexemes(known, docs));
    const words = known.map((l) => l.lexeme);
    return {
      english: lexemeQuery(known.filter((l) => selecting.has(l.lexeme)).map((l) => l.lexeme)),
      englishAll: lexemeQuery(words),
      englishEvery: lexemeQuery(words, '&'),
      selectedTurns: known.reduce((n, l) => n + (selecting.has(l.lexeme) ? l.df : 0), 0),
      scopeTurns: docs,
      simple: websearchOr(keywordList),
      keywords: keywordList.join(' '),
      lexemes: words,
      // BM25's idf, never negative.
      idf: known.map((l) => Math.log(1 + (docs - l.df + 0.5) / (l.df + 0.5))),
      avgLength: docs > 0 && length > 0 ? length / docs : 1,
    };
  }

  /**
   * Runs every path for the kinds in one scope, completes each candidate's scores on the paths
   * that did not return it (a candidate outside one path's top N still has a similarity and a
   * rank there), then loads what ranking needs.
   */
  searchScope(scope: ScopeName, wanted: SourceKind[], vector: QueryVector | null): Promise<void> {
    return this.searchScopes([[scope, wanted]], vector);
  }

  /**
   * Several scopes searched side by side, with the outcome of searching them one after another
   * in the given order: their results are taken in that order (the trigram fallback of a later
   * scope counts the full-text hits of the earlier ones), and so are their failures.
   */
  async searchScopes(
    scopes: [ScopeName, SourceKind[]][],
    vector: QueryVector | null,
  ): Promise<void> {
    const searches: ScopeSearch[] = scopes.map(([scope, wanted]) => ({
      scope,
      // A legacy with no stories (most, for a conversation's questions) saves their queries.
      kinds: wanted.filter((k) => k !== 'story' || this.storiesPresent),
      rows: new Map(),
      q: this.lexicalOn ? this.lexicalQuery(scope) : null,
      failures: [],
    }));
    const fetched = await Promise.all(searches.map((search) => this.fetch(search, vector)));
    for (const [i, search] of searches.entries()) await this.take(search, fetched[i]);
    const lists = await Promise.all(searches.map((search) => this.finish(search, vector)));
    for (const search of searches) {
      for (const [stage, err] of search.failures) this.fail(stage, err);
    }
    this.lists.push(...lists);
  }

  private put(search: ScopeSearch, kind: SourceKind, path: PathName, found: PathRow[]): void {
    const byPath = search.rows.get(kind) ?? {};
    const byId = byPath[path] ?? new Map<string, PathRow>();
    for (const row of found) byId.set(row.id, row);
    byPath[path] = byId;
    search.rows.set(kind, byPath);
    this.hits[path] += found.length;
  }

  /**
   * The paths of a scope: independent reads that, on a server, run side by side on the pool (on
   * the embedded database, in turn on its one connection).
   */
  private fetch({ scope, kinds, q }: ScopeSearch, vector: QueryVector | null) {
    const n = this.settings.candidates;
    const range = this.features.timeRange;
    const timeKinds = range && this.settings.time !== 'off' ? this.timeKinds(kinds) : [];
    return Promise.all([
      vector
        ? settle(() =>
            this.timed('dense', () => this.paths.denseMany(kinds, scope, this.scope, vector, n)),
          )
        : null,
      Promise.all(
        q
          ? kinds.map((kind) =>
              settle(() =>
                this.timed('lexical', () =>
                  kind === 'segment'
                    ? this.paths.lexicalSegments(scope, this.scope, q, this.settings.bm25, n)
                    : this.paths.lexical(kind, scope, this.scope, q, n),
                ),
              ),
            )
          : [],
      ),
      Promise.all(
        range
          ? timeKinds.map((kind) =>
              settle(() => this.paths.inPeriod(kind, scope, this.scope, range.from, range.to, n)),
            )
          : [],
      ),
      kinds.includes('segment') && this.settings.weights.standing > 0
        ? settle(() => this.paths.standing(scope, this.scope, n))
        : null,
    ]);
  }

  private timeKinds(kinds: SourceKind[]): ('segment' | 'summary')[] {
    return kinds.filter((k): k is 'segment' | 'summary' => k === 'segment' || k === 'summary');
  }

  /** A scope's path results, taken in a fixed order whichever answered first. */
  private async take(
    search: ScopeSearch,
    [dense, lexical, inPeriod, standing]: Awaited<ReturnType<SearchRun['fetch']>>,
  ): Promise<void> {
    const { kinds, failures } = search;
    if (dense?.ok) {
      for (const [kind, found] of dense.value) this.put(search, kind, 'dense', found);
    } else if (dense) {
      this.degrade('dense');
      failures.push(['dense', dense.error]);
    }
    lexical.forEach((found, i) => {
      if (found.ok) {
        this.put(search, kinds[i], 'lexical', found.value);
        this.lexicalHits += found.value.length;
      } else {
        this.degrade('lexical');
        failures.push(['lexical', found.error]);
      }
    });
    // Full-text search found (almost) nothing: names with typos, CJK text. Try trigrams.
    if (search.q && this.lexicalHits < 2) await this.trigram(search);
    const timeKinds = this.timeKinds(kinds);
    inPeriod.forEach((found, i) => {
      if (found.ok) this.put(search, timeKinds[i], 'time', found.value);
      else failures.push(['time', found.error]);
    });
    if (standing?.ok) this.put(search, 'segment', 'standing', standing.value);
    else if (standing) failures.push(['standing', standing.error]);
  }

  /** Completes the candidates' scores and loads their rows: the scope's list of candidates. */
  private async finish(search: ScopeSearch, vector: QueryVector | null): Promise<Candidate[]> {
    const { scope, rows, failures } = search;
    await this.complete(search, vector);
    const loaded = await Promise.all(
      [...rows].map(([kind, byPath]) => {
        const ids = new Set(Object.values(byPath).flatMap((m) => [...m.keys()]));
        const missing = [...ids].filter((id) => !this.details.has(`${kind}:${id}`));
        return settle(() => this.candidates.details(kind, missing));
      }),
    );
    const list: Candidate[] = [];
    [...rows].forEach(([kind, byPath], k) => {
      const found = loaded[k];
      if (found.ok) {
        for (const [id, row] of found.value) this.details.set(`${kind}:${id}`, row);
      } else {
        failures.push(['details', found.error]);
      }
      const ids = new Set(Object.values(byPath).flatMap((m) => [...m.keys()]));
      const paths = this.pathHits(byPath);
      for (const id of ids) {
        const d = this.details.get(`${kind}:${id}`);
        if (!d) continue;
        list.push({
          ...d,
          kind,
          id,
          scope: scope === 'current' ? 'current' : 'wider',
          paths: paths.get(id) ?? {},
          coverage: byPath.lexical?.get(id)?.coverage ?? 0,
          sourceMessageIds: d.sourceMessageIds ?? [],
        });
      }
    });
    return list;
  }

  private async trigram(search: ScopeSearch): Promise<void> {
    // Keywords (stop words dropped) when full-text search could tell them apart.
    const probes = trigramProbes(this.keywords || this.features.text);
    const cjk = probes.filter((p) => hasCjk(p) && [...p].length === 3);
    const words = probes.filter((p) => !hasCjk(p));
    if (cjk.length + words.length === 0) return;
    this.fallback = true;
    for (const kind of search.kinds) {
      try {
        this.put(
          search,
          kind,
          'trigram',
          await this.timed('trigram', () =>
            this.paths.trigram(
              kind,
              search.scope,
              this.scope,
              { words, cjk },
              this.settings.candidates,
            ),
          ),
        );
      } catch (err) {
        search.failures.push(['trigram', err]);
      }
    }
  }

  /**
   * Scores on the dense and lexical paths for candidates those paths did not return, every
   * kind's side by side, taken in a fixed order.
   */
  private async complete(
    { scope, rows, q, failures }: ScopeSearch,
    vector: QueryVector | null,
  ): Promise<void> {
    const work = [...rows].map(([kind, byPath]) => {
      const ids = [...new Set(Object.values(byPath).flatMap((m) => [...m.keys()]))];
      const denseMissing = byPath.dense ? ids.filter((id) => !byPath.dense!.has(id)) : [];
      const lexicalMissing = byPath.lexical ? ids.filter((id) => !byPath.lexical!.has(id)) : [];
      return Promise.all([
        vector && byPath.dense
          ? settle(() => this.timed('dense', () => this.paths.denseFor(kind, denseMissing, vector)))
          : null,
        q && lexicalMissing.length > 0
          ? settle(() =>
              this.timed('lexical', () =>
                kind === 'segment'
                  ? this.paths.lexicalSegments(
                      scope,
                      this.scope,
                      q,
                      this.settings.bm25,
                      lexicalMissing.length,
                      { ids: lexicalMissing },
                    )
                  : this.paths.lexical(
                      kind,
                      scope,
                      this.scope,
                      q,
                      lexicalMissing.length,
                      lexicalMissing,
                    ),
              ),
            )
          : null,
      ]);
    });
    const done = await Promise.all(work);
    [...rows].forEach(([, byPath], k) => {
      const [dense, lexical] = done[k];
      if (dense?.ok) for (const row of dense.value) byPath.dense!.set(row.id, row);
      else if (dense) failures.push(['dense', dense.error]);
      if (lexical?.ok) for (const row of lexical.value) byPath.lexical!.set(row.id, row);
      else if (lexical) failures.push(['lexical', lexical.error]);
    });
  }

  /**
   * Path hits per candidate: ranks within each path, lexical ranks divided by the best one
   * (the normalized rank).
   */
  private pathHits(
    byPath: Partial<Record<PathName, Map<string, PathRow>>>,
  ): Map<string, Candidate['paths']> {
    const out = new Map<string, Candidate['paths']>();
    for (const [path, byId] of Object.entries(byPath) as [PathName, Map<string, PathRow>][]) {
      const sorted = [...byId.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
      const best = sorted[0]?.score ?? 0;
      sorted.forEach((row, i) => {
        const hits = out.get(row.id) ?? {};
        hits[path] =
          path === 'lexical'
            ? { score: best > 0 ? row.score / best : 0, rank: i + 1, raw: row.score }
            : { score: row.score, rank: i + 1 };
        out.set(row.id, hits);
      });
    }
    return out;
  }

  /** The candidates of every scope searched so far (or of the first `scopes` of them), fused. */
  rank(scopes = this.lists.length): Ranked[] {
    const started = performance.now();
    const ranked = fuse(mergeCandidates(this.lists.slice(0, scopes)), this.features, this.settings);
    this.pathMs.fusion += performance.now() - started;
    return ranked;
  }
}
