import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The LoCoMo evaluation's data handling and scoring, apart from the runner
 * (bench/locomo.eval.ts) so that it can be tested without importing anything.
 */

export interface LocomoTurn {
  conv_id: string;
  session: number;
  session_date_time?: string;
  timestamp: string;
  turn_index: number;
  dia_id: string;
  speaker: string;
  text: string;
  blip_caption?: string;
}

export interface LocomoQuestion {
  qid: string;
  conv_id: string;
  category: number;
  category_name?: string;
  question: string;
  evidence_turns: string[];
  evidence_sessions?: number[];
}

export interface FloorRow {
  retriever: string;
  r5: number;
  r10: number;
  /** Session-level R@5 of the same retriever, when the README states it. */
  sessionR5: number | null;
}

export interface LocomoDataset {
  conversations: Map<string, LocomoTurn[]>;
  /** Questions with usable evidence, in file order. */
  questions: LocomoQuestion[];
  skipped: number;
  /** The BM25 row of the README's table, if it has one. */
  floor: FloorRow | null;
}

function jsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as T);
}

export function readDataset(dir: string): LocomoDataset {
  for (const file of ['turns.jsonl', 'qrels.jsonl']) {
    if (!existsSync(join(dir, file))) throw new Error(`${join(dir, file)} is missing`);
  }
  const conversations = new Map<string, LocomoTurn[]>();
  for (const turn of jsonl<LocomoTurn>(join(dir, 'turns.jsonl'))) {
    const list = conversations.get(turn.conv_id) ?? [];
    list.push(turn);
    conversations.set(turn.conv_id, list);
  }
  for (const list of conversations.values()) {
    list.sort((a, b) => a.session - b.session || a.turn_index - b.turn_index);
  }
  const all = jsonl<LocomoQuestion>(join(dir, 'qrels.jsonl'));
  const questions = all.filter((q) => q.evidence_turns.length > 0 && conversations.has(q.conv_id));
  const readme = join(dir, 'README.md');
  return {
    conversations,
    questions,
    skipped: all.length - questions.length,
    floor: existsSync(readme) ? parseFloor(readFileSync(readme, 'utf8')) : null,
  };
}

/**
 * The README's BM25 floor: a paragraph that opens with it (BEAM's), else its table's BM25 row
 * (`| BM25 ... | 46.8 | 54.6 | ... |`), and the session-level sentence
 * (`Session level, BM25 ...: R@5 79.8 ...`).
 */
export function parseFloor(readme: string): FloorRow | null {
  const session = /session level,\s*BM25[^:\n]*:\s*R@5\s+([\d.]+)/i.exec(readme);
  // A floor told in prose (`BM25 over the turns ...: ... Recall@5 28.6, Recall@10 36.2`).
  const prose = /\b(BM25\b[^:\n|]*)[^\n]*?Recall@5\s+([\d.]+),\s*Recall@10\s+([\d.]+)/im.exec(
    readme.replace(/\n(?!\n|#|\|)/g, ' '),
  );
  if (prose) {
    return {
      retriever: prose[1].trim(),
      r5: Number(prose[2]),
      r10: Number(prose[3]),
      sessionR5: session ? Number(session[1]) : null,
    };
  }
  for (const line of readme.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4 || !/^BM25\b/i.test(cells[1] ?? '')) continue;
    const r5 = Number(cells[2]);
    const r10 = Number(cells[3]);
    if (Number.isFinite(r5) && Number.isFinite(r10)) {
      return { retriever: cells[1], r5, r10, sessionR5: session ? Number(session[1]) : null };
    }
  }
  return null;
}

/** A turn as imported: its dia_id, speaker, session and photo caption in metadata. */
export function toImportedMessage(turn: LocomoTurn, firstSpeaker: string) {
  const metadata: Record<string, unknown> = {
    dia_id: turn.dia_id,
    speaker: turn.speaker,
    session: turn.session,
  };
  if (turn.blip_caption) metadata.image_caption = turn.blip_caption;
  return {
    // Both speakers are people; the first one takes the user's side of the log.
    role: turn.speaker === firstSpeaker ? 'USER' : 'ASSISTANT',
    content: turn.text.trim() || (turn.blip_caption ? `[photo] ${turn.blip_caption}` : '…'),
    occurredAt: new Date(
      /(?:[zZ]|[+-]\d\d:?\d\d)$/.test(turn.timestamp) ? turn.timestamp : `${turn.timestamp}Z`,
    ).toISOString(),
    metadata,
  };
}

/** The dia_ids a recall result cites (several for a summary, none for some memories). */
export function diaIdsOf(messageMetadata: Record<string, unknown>[]): string[] {
  const ids = messageMetadata
    .map((m) => m.dia_id)
    .filter((id): id is string => typeof id === 'string');
  return [...new Set(ids)];
}

/**
 * The run file's `ranked` list: every cited dia_id once, at its first rank, so a summary citing
 * several turns spreads them over consecutive places and a result citing none takes no place.
 */
export function flattenRanked(results: string[][]): string[] {
  return [...new Set(results.flat())];
}

/** Turn-level recall at k of a flat ranked list, the way a run file alone is scored. */
export function flatRecall(ranked: string[], question: LocomoQuestion, k: number): number {
  const top = new Set(ranked.slice(0, k));
  const evidence = new Set(question.evidence_turns);
  return [...evidence].filter((e) => top.has(e)).length / evidence.size;
}

export function sessionOf(diaId: string): number | null {
  const m = /^D(\d+):/.exec(diaId);
  return m ? Number(m[1]) : null;
}

export interface QuestionScores {
  r5: number;
  r10: number;
  ndcg10: number;
  /** The sessions of the first five results. */
  sessionR5: number;
  /**
   * The data set's own session-level definition: results mapped to their sessions, first
   * occurrences kept, the first five sessions of that list (several turns of one session
   * among the first results count as one place).
   */
  distinctSessionR5: number;
  /** Recall of the flat list (each cited turn takes its own place): how the run file scores. */
  flatR5: number;
  flatR10: number;
}

/**
 * Scores one question. `results` are the ranked results, each the dia_ids it cites: a result
 * that cites several turns puts all of them at its rank, one that cites none still takes a rank.
 */
export function scoreQuestion(results: string[][], question: LocomoQuestion): QuestionScores {
  const evidence = new Set(question.evidence_turns);
  const found = (k: number) => {
    const seen = new Set(results.slice(0, k).flat());
    return [...evidence].filter((e) => seen.has(e)).length / evidence.size;
  };
  // NDCG@10 with binary relevance: each evidence turn counts once, at the first rank citing it.
  let dcg = 0;
  const counted = new Set<string>();
  results.slice(0, 10).forEach((ids, i) => {
    for (const id of ids) {
      if (evidence.has(id) && !counted.has(id)) {
        counted.add(id);
        dcg += 1 / Math.log2(i + 2);
      }
    }
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(evidence.size, 10); i++) ideal += 1 / Math.log2(i + 2);
  const sessions = new Set(
    question.evidence_sessions?.length
      ? question.evidence_sessions
      : question.evidence_turns.map(sessionOf).filter((s): s is number => s !== null),
  );
  const sessionsTop5 = new Set(
    results
      .slice(0, 5)
      .flat()
      .map(sessionOf)
      .filter((s): s is number => s !== null),
  );
  const distinctSessions: number[] = [];
  for (const ids of results) {
    for (const session of ids.map(sessionOf)) {
      if (session !== null && !distinctSessions.includes(session)) distinctSessions.push(session);
    }
    if (distinctSessions.length >= 5) break;
  }
  const firstFive = new Set(distinctSessions.slice(0, 5));
  const flat = flattenRanked(results);
  return {
    r5: found(5),
    r10: found(10),
    flatR5: flatRecall(flat, question, 5),
    flatR10: flatRecall(flat, question, 10),
    ndcg10: ideal > 0 ? Math.min(1, dcg / ideal) : 0,
    sessionR5:
      sessions.size > 0
        ? [...sessions].filter((s) => sessionsTop5.has(s)).length / sessions.size
        : 0,
    distinctSessionR5:
      sessions.size > 0 ? [...sessions].filter((s) => firstFive.has(s)).length / sessions.size : 0,
  };
}

export interface Aggregate extends QuestionScores {
  label: string;
  questions: number;
}

/** Means by category, over all of them and (LoCoMo's categories) over 1-4, as percentages. */
export function aggregate(
  scored: { question: LocomoQuestion; scores: QuestionScores }[],
): Aggregate[] {
  const mean = (label: string, rows: typeof scored): Aggregate => {
    const n = rows.length || 1;
    const sum = (k: keyof QuestionScores) => (100 * rows.reduce((a, r) => a + r.scores[k], 0)) / n;
    return {
      label,
      questions: rows.length,
      r5: sum('r5'),
      r10: sum('r10'),
      ndcg10: sum('ndcg10'),
      sessionR5: sum('sessionR5'),
      distinctSessionR5: sum('distinctSessionR5'),
      flatR5: sum('flatR5'),
      flatR10: sum('flatR10'),
    };
  };
  const categories = [...new Set(scored.map((s) => s.question.category))].sort((a, b) => a - b);
  return [
    ...categories.map((c) => {
      const rows = scored.filter((s) => s.question.category === c);
      const name = rows[0]?.question.category_name;
      return mean(`${c}${name ? ` ${name}` : ''}`, rows);
    }),
    mean(`all (${categories[0]}-${categories[categories.length - 1]})`, scored),
    // LoCoMo's usual figure leaves out its adversarial category (5).
    ...(categories.every((c) => c >= 1 && c <= 5)
      ? [
          mean(
            '1-4',
            scored.filter((s) => s.question.category <= 4),
          ),
        ]
      : []),
  ];
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function formatTable(rows: Record<string, string>[]): string {
  const keys = Object.keys(rows[0]);
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => r[k].length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  return [
    line(keys),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map((r) => line(keys.map((k) => r[k]))),
  ].join('\n');
}
