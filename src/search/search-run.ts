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
    // Counts are kept for the current conversation and for all: 'wider' is all but current.
    const inScope = (current: number, all: number) =>
      scope === 'current' ? current : scope === 'wider' ? all - current : all;
    const docs = inScope(s.segmentsCurrent, s.segmentsAll);
    const length = inScope(s.lengthCurrent, s.lengthAll);
    const known = this.lexemes
      .map((l) => ({ lexeme: l.lexeme, df: inScope(l.dfCurrent, l.dfAll) }))
      .filter((l) => l.df > 0);
    const keywordList = queryWords(this.keywords);
    const selecting = new Set(selectingLexemes(known, docs));
    return {
      english: lexemeQuery(known.filter((l) => selecting.has(l.lexeme)).map((l) => l.lexeme)),
      englishAll: lexemeQuery(known.map((l) => l.lexeme)),
      selectedTurns: known.reduce((n, l) => n + (selecting.has(l.lexeme) ? l.df : 0), 0),
      simple: websearchOr(keywordList),
      keywords: keywordList.join(' '),
      lexemes: known.map((l) => l.lexeme),
      // BM25's idf, never negative.
      idf: known.map((l) => Math.log(1 + (docs - l.df + 0.5) / (l.df + 0.5))),
      avgLength: docs > 0 ? length / docs : 1,
    };
  }

  /**
   * Runs every path for the kinds in one scope, completes each candidate's scores on the paths
   * that did not return it (a candidate outside one path's top N still has a similarity and a
   * rank there), then loads what ranking needs.
   */
  async searchScope(scope: ScopeName, wanted: SourceKind[], vector: QueryVector | null) {
    // A legacy with no stories (most, for a conversation's questions) saves their queries.
    const kinds = wanted.filter((k) => k !== 'story' || this.storiesPresent);
    const settings = this.settings;
    const n = settings.candidates;
    const scopeTag = scope === 'current' ? 'current' : 'wider';
    const rows = new Map<SourceKind, Partial<Record<PathName, Map<string, PathRow>>>>();
    const put = (kind: SourceKind, path: PathName, found: PathRow[]) => {
      const byPath = rows.get(kind) ?? {};
      const byId = byPath[path] ?? new Map<string, PathRow>();
      for (const row of found) byId.set(row.id, row);
      byPath[path] = byId;
      rows.set(kind, byPath);
      this.hits[path] += found.length;
    };

    if (vector) {
      try {
        for (const [kind, found] of await this.timed('dense', () =>
          this.paths.denseMany(kinds, scope, this.scope, vector, n),
        )) {
          put(kind, 'dense', found);
        }
      } catch (err) {
        this.degrade('dense');
        this.fail('dense', err);
      }
    }

    const q = this.lexicalOn ? this.lexicalQuery(scope) : null;
    if (q) {
      for (const kind of kinds) {
        try {
          const found = await this.timed('lexical', () =>
            kind === 'segment'
              ? this.paths.lexicalSegments(scope, this.scope, q, settings.bm25, n)
              : this.paths.lexical(kind, scope, this.scope, q, n),
          );
          put(kind, 'lexical', found);
          this.lexicalHits += found.length;
        } catch (err) {
          this.degrade('lexical');
          this.fail('lexical', err);
        }
      }
      // Full-text search found (almost) nothing: names with typos, CJK text. Try trigrams.
      if (this.lexicalHits < 2) await this.trigram(scope, kinds, put);
    }

    const range = this.features.timeRange;
    if (range && settings.time !== 'off') {
      for (const kind of kinds) {
        if (kind !== 'segment' && kind !== 'summary') continue;
        try {
          put(
            kind,
            'time',
            await this.paths.inPeriod(kind, scope, this.scope, range.from, range.to, n),
          );
        } catch (err) {
          this.fail('time', err);
        }
      }
    }

    if (kinds.includes('segment') && settings.weights.standing > 0) {
      try {
        put('segment', 'standing', await this.paths.standing(scope, this.scope, n));
      } catch (err) {
        this.fail('standing', err);
      }
    }

    await this.complete(scope, rows, vector, q);

    const list: Candidate[] = [];
    for (const [kind, byPath] of rows) {
      const ids = new Set(Object.values(byPath).flatMap((m) => [...m.keys()]));
      const missing = [...ids].filter((id) => !this.details.has(`${kind}:${id}`));
      try {
        for (const [id, row] of await this.candidates.details(kind, missing)) {
          this.details.set(`${kind}:${id}`, row);
        }
      } catch (err) {
        this.fail('details', err);
      }
      const paths = this.pathHits(byPath);
      for (const id of ids) {
        const d = this.details.get(`${kind}:${id}`);
        if (!d) continue;
        list.push({
          ...d,
          kind,
          id,
          scope: scopeTag,
          paths: paths.get(id) ?? {},
          coverage: byPath.lexical?.get(id)?.coverage ?? 0,
          sourceMessageIds: d.sourceMessageIds ?? [],
        });
      }
    }
    this.lists.push(list);
  }

  private async trigram(
    scope: ScopeName,
    kinds: SourceKind[],
    put: (kind: SourceKind, path: PathName, found: PathRow[]) => void,
  ): Promise<void> {
    // Keywords (stop words dropped) when full-text search could tell them apart.
    const probes = trigramProbes(this.keywords || this.features.text);
    const cjk = probes.filter((p) => hasCjk(p) && [...p].length === 3);
    const words = probes.filter((p) => !hasCjk(p));
    if (cjk.length + words.length === 0) return;
    this.fallback = true;
    for (const kind of kinds) {
      try {
        put(
          kind,
          'trigram',
          await this.timed('trigram', () =>
            this.paths.trigram(kind, scope, this.scope, { words, cjk }, this.settings.candidates),
          ),
        );
      } catch (err) {
        this.fail('trigram', err);
      }
    }
  }

  /** Scores on the dense and lexical paths for candidates those paths did not return. */
  private async complete(
    scope: ScopeName,
    rows: Map<SourceKind, Partial<Record<PathName, Map<string, PathRow>>>>,
    vector: QueryVector | null,
    q: LexicalQuery | null,
  ): Promise<void> {
    for (const [kind, byPath] of rows) {
      const ids = [...new Set(Object.values(byPath).flatMap((m) => [...m.keys()]))];
      if (vector && byPath.dense) {
        const missing = ids.filter((id) => !byPath.dense!.has(id));
        try {
          for (const row of await this.timed('dense', () =>
            this.paths.denseFor(kind, missing, vector),
          ))
            byPath.dense.set(row.id, row);
        } catch (err) {
          this.fail('dense', err);
        }
      }
      if (q && byPath.lexical) {
        const missing = ids.filter((id) => !byPath.lexical!.has(id));
        if (missing.length === 0) continue;
        try {
          const found = await this.timed('lexical', () =>
            kind === 'segment'
              ? this.paths.lexicalSegments(
                  scope,
                  this.scope,
                  q,
                  this.settings.bm25,
                  missing.length,
                  missing,
                )
              : this.paths.lexical(kind, scope, this.scope, q, missing.length, missing),
          );
          for (const row of found) byPath.lexical.set(row.id, row);
        } catch (err) {
          this.fail('lexical', err);
        }
      }
    }
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

  rank(): Ranked[] {
    const started = performance.now();
    const ranked = fuse(mergeCandidates(this.lists), this.features, this.settings);
    this.pathMs.fusion += performance.now() - started;
    return ranked;
  }
}
