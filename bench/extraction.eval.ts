/**
 * npm run eval:extraction [-- --data DIR] [--conversations conv-26,...] [--sessions N]
 *   [--llm heuristics,packaged,/path/to/model.gguf] [--questions N]
 *
 * What Keepsake learns, measured on LoCoMo's development half with its annotations: each
 * conversation is imported as its own legacy (named after its first speaker, whose turns are
 * the user's side), the background work is let finish (summaries and the facts found with
 * them), memories are extracted from every exchange (the backfill, imports included) and the
 * period summaries are built; then
 * - facts and memories against the dataset's observations: each observation's best match by
 *   token F1 and by the local encoder's cosine, the share matched at F1 0.5 or better, and how
 *   many extracted items match no observation at 0.5 (precision);
 * - conversation summaries (chunks) and weekly summaries against the session summaries
 *   (ROUGE-L, each session against the summaries that cover its turns);
 * - answers the model writes from `context` alone against the dataset's answers (token F1 per
 *   category, as the LoCoMo paper scores them), for a few questions per conversation;
 * - seconds per task and tokens a second, from the model calls the service recorded.
 * One run per language model: the heuristics (LLM=local), the packaged SmolLM2-135M
 * (LLM=embedded, from MODELS_DIR), or any GGUF file at a path. It prints one table.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { BackfillRunner } from '../src/backfill/backfill.runner.js';
import { createApp } from '../src/bootstrap.js';
import { loadAppConfig } from '../src/app.config.js';
import { JobsService } from '../src/jobs/jobs.service.js';
import { EMBEDDER } from '../src/llm/embedder.js';
import type { Embedder } from '../src/llm/embedder.js';
import { LANGUAGE_MODEL } from '../src/llm/language-model.js';
import type { LanguageModel } from '../src/llm/language-model.js';
import { MemoryExtractionService } from '../src/memories/memory-extraction.service.js';
import { readDataset, toImportedMessage } from '../src/search/eval/locomo.js';
import type { LocomoTurn } from '../src/search/eval/locomo.js';
import { StoryFactsService } from '../src/stories/story-facts.service.js';
import { SummariesService } from '../src/summaries/summaries.service.js';
import { bestOf, mean, rougeL, tokenF1 } from './extraction-scores.js';
import { BENCH_LIMITS, JWT_SECRET, table, token } from './support.js';

interface Annotation {
  conv_id: string;
  session: number;
  kind: 'observation' | 'session_summary' | 'event';
  speaker?: string;
  text: string;
}

interface Question {
  conv_id: string;
  category: number;
  question: string;
  answer: string | number;
}

function jsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

function client(url: string, bearer: string) {
  return async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
    if (body.errors?.length) throw new Error(body.errors[0].message);
    return body.data!;
  };
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb || 1);
}

interface Row {
  model: string;
  observations: number;
  items: number;
  f1: number;
  matched: number;
  cos: number;
  precision: number;
  chunks: number;
  weeks: number;
  answers: Record<number, number[]>;
  perTask: string;
  tokensPerSecond: number;
  seconds: number;
}

async function runOne(
  llm: string,
  dataDir: string,
  convs: Map<string, LocomoTurn[]>,
  annotations: Annotation[],
  questions: Question[],
): Promise<Row> {
  const started = performance.now();
  const modelEnv: Record<string, string> =
    llm === 'heuristics'
      ? { LLM: 'local' }
      : llm === 'packaged'
        ? { LLM: 'embedded', EMBEDDED_LLM_MODEL: 'smollm2-135m' }
        : { LLM: 'embedded', EMBEDDED_LLM_MODEL_PATH: llm };
  const config = loadAppConfig({
    ...BENCH_LIMITS,
    ...process.env,
    ...modelEnv,
    DATA_DIR: dataDir,
    JWT_SECRET,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    AGENT_REPLY: 'off',
    JOBS_WORKER: 'false',
    JOBS_SCHEDULER: 'false',
  });
  const app = await createApp(config);
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const gql = client(`http://127.0.0.1:${port}/graphql`, token('extraction-eval'));
    const ds = app.get(DataSource);
    const jobs = app.get(JobsService);
    const model = app.get<LanguageModel>(LANGUAGE_MODEL);
    const embedder = app.get<Embedder>(EMBEDDER);
    const conversationOf = new Map<string, string>();
    const legacyOf = new Map<string, string>();
    for (const [convId, list] of convs) {
      const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
        'mutation($n: String!) { createLegacy(input: { name: $n }) { id } }',
        { n: list[0].speaker },
      );
      legacyOf.set(convId, createLegacy.id);
      const { importConversation } = await gql<{
        importConversation: { conversation: { id: string } };
      }>(
        `mutation($input: ImportConversationInput!) { importConversation(input: $input) { conversation { id } } }`,
        {
          input: {
            legacyId: createLegacy.id,
            title: convId,
            messages: list.map((t) => toImportedMessage(t, list[0].speaker)),
          },
        },
      );
      conversationOf.set(convId, importConversation.conversation.id);
    }
    // The member keeps memories of these conversations (an import starts with remember off).
    await ds.query(`UPDATE conversation_participants SET remember = true`);
    // Summaries (and their facts), then a summary of whatever is left below the threshold.
    await jobs.drain({ timeoutMs: 24 * 3600_000, horizonMs: 0 });
    // summarizeNow's pass, queued rather than asked over HTTP: a slow model takes minutes.
    const summaries = app.get(SummariesService);
    for (const id of conversationOf.values()) await summaries.enqueue(id, { force: true });
    await jobs.drain({ timeoutMs: 24 * 3600_000, horizonMs: 0 });
    console.log(`  summarized in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    // Memories from every exchange: imports are extracted only by the backfill.
    const backfill = new BackfillRunner(
      app.get(StoryFactsService),
      app.get(MemoryExtractionService),
    );
    await backfill.run(
      { userId: null, legacyId: null },
      { facts: false, memories: true, dryRun: false, includeImports: true, shareLikeStory: false },
      { total: () => undefined, advance: () => undefined, note: () => undefined },
    );
    // Weekly summaries of each conversation's span.
    for (const [convId, list] of convs) {
      const day = (t: LocomoTurn) => toImportedMessage(t, '').occurredAt.slice(0, 10);
      await gql(
        'mutation($i: BackfillPeriodSummariesInput!) { backfillPeriodSummaries(input: $i) { id } }',
        {
          i: { legacyId: legacyOf.get(convId), from: day(list[0]), to: day(list[list.length - 1]) },
        },
      );
    }
    await jobs.drain({ timeoutMs: 24 * 3600_000, horizonMs: 0 });
    console.log(
      `  memories and weeks done in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );

    const row: Row = {
      model: model.modelId,
      observations: 0,
      items: 0,
      f1: 0,
      matched: 0,
      cos: 0,
      precision: 0,
      chunks: 0,
      weeks: 0,
      answers: {},
      perTask: '',
      tokensPerSecond: 0,
      seconds: 0,
    };
    const f1s: number[] = [];
    const cosines: number[] = [];
    const precise: number[] = [];
    const chunkRouge: number[] = [];
    const weekRouge: number[] = [];
    for (const [convId, list] of convs) {
      const conversationId = conversationOf.get(convId)!;
      const legacyId = legacyOf.get(convId)!;
      const sessions = new Set(list.map((t) => t.session));
      const observed = annotations.filter(
        (a) => a.conv_id === convId && a.kind === 'observation' && sessions.has(a.session),
      );
      const items = [
        ...(
          await ds.query<{ content: string }[]>(
            `SELECT content FROM facts WHERE source_conversation_id = $1 AND status <> 'DELETED'`,
            [conversationId],
          )
        ).map((r) => r.content),
        ...(
          await ds.query<{ content: string }[]>(
            `SELECT content FROM memories WHERE conversation_id = $1 AND status = 'ACTIVE'`,
            [conversationId],
          )
        ).map((r) => r.content),
      ];
      const texts = observed.map((o) => o.text);
      f1s.push(...bestOf(texts, items, tokenF1));
      precise.push(...bestOf(items, texts, tokenF1).map((f) => (f >= 0.5 ? 1 : 0)));
      if (items.length > 0 && texts.length > 0) {
        const [obsVectors, itemVectors] = [
          await embedder.embed(texts, 'passage'),
          await embedder.embed(items, 'passage'),
        ];
        for (const o of obsVectors) cosines.push(Math.max(...itemVectors.map((v) => cosine(o, v))));
      }
      row.observations += texts.length;
      row.items += items.length;

      // Each session's summary against the chunks and the week summaries that cover it.
      const turnSession = list.map((t) => t.session);
      const chunks = await ds.query<{ s: number; e: number; content: string }[]>(
        `SELECT range_start AS s, range_end AS e, content FROM conversation_chunks WHERE conversation_id = $1`,
        [conversationId],
      );
      const weeks = await ds.query<{ from: string; to: string; summary: string }[]>(
        `SELECT period_start::text AS "from", period_end::text AS "to", summary FROM period_summaries
          WHERE legacy_id = $1 AND period = 'WEEK' AND deleted_at IS NULL`,
        [legacyId],
      );
      for (const summary of annotations.filter(
        (a) => a.conv_id === convId && a.kind === 'session_summary' && sessions.has(a.session),
      )) {
        const covering = chunks
          .filter((c) => turnSession.slice(c.s, c.e + 1).includes(summary.session))
          .map((c) => c.content)
          .join(' ');
        chunkRouge.push(rougeL(covering, summary.text));
        const day = toImportedMessage(
          list.find((t) => t.session === summary.session)!,
          '',
        ).occurredAt.slice(0, 10);
        const week = weeks.find((w) => w.from <= day && day <= w.to);
        weekRouge.push(week ? rougeL(week.summary, summary.text) : 0);
      }

      // Answers written from `context` alone.
      const asked = questions.filter((q) => q.conv_id === convId && q.category <= 4);
      for (const q of asked) {
        const { context } = await gql<{
          context: { sections: { title: string; items: { text: string }[] }[] };
        }>(
          'query($c: ID!, $q: String!) { context(conversationId: $c, query: $q) { sections { title items { text } } } }',
          { c: conversationId, q: q.question },
        );
        const system = [
          'Answer the question in a few words, using only what follows. If it does not say, answer "unknown".',
          ...context.sections.map((s) => `## ${s.title}\n${s.items.map((i) => i.text).join('\n')}`),
        ].join('\n\n');
        const answer = await model
          .reply({ system, messages: [{ role: 'USER', content: q.question }] })
          .then((r) => r.text)
          .catch(() => '');
        (row.answers[q.category] ??= []).push(tokenF1(answer, String(q.answer)));
      }
    }
    row.f1 = mean(f1s);
    row.matched = mean(f1s.map((f) => (f >= 0.5 ? 1 : 0)));
    row.cos = mean(cosines);
    row.precision = mean(precise);
    row.chunks = mean(chunkRouge);
    row.weeks = mean(weekRouge);
    const calls = await ds.query<{ task: string; n: number; ms: number; out: number }[]>(
      `SELECT task, count(*)::int AS n, coalesce(sum(duration_ms), 0)::float8 AS ms,
              coalesce(sum(completion_tokens), 0)::float8 AS out
         FROM model_calls WHERE task <> 'embed' GROUP BY task ORDER BY task`,
    );
    row.perTask = calls.map((c) => `${c.task} ${(c.ms / c.n / 1000).toFixed(2)} s`).join(', ');
    const ms = calls.reduce((n, c) => n + c.ms, 0);
    row.tokensPerSecond = ms > 0 ? calls.reduce((n, c) => n + c.out, 0) / (ms / 1000) : 0;
    row.seconds = (performance.now() - started) / 1000;
    return row;
  } finally {
    await app.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string', default: resolve('../shared/bench/locomo-dev') },
      conversations: { type: 'string', default: 'conv-26' },
      sessions: { type: 'string' },
      llm: { type: 'string', default: 'heuristics,packaged' },
      questions: { type: 'string', default: '20' },
    },
  });
  const dir = resolve(values.data!);
  const dataset = readDataset(dir);
  const only = values.conversations!.split(',').map((c) => c.trim());
  const maxSession = values.sessions ? Number(values.sessions) : Infinity;
  const convs = new Map(
    [...dataset.conversations]
      .filter(([id]) => only.includes(id))
      .map(([id, list]) => [id, list.filter((t) => t.session <= maxSession)]),
  );
  const annotations = jsonl<Annotation>(join(dir, 'annotations.jsonl'));
  const perConversation = Number(values.questions);
  const questions = jsonl<Question>(join(dir, 'qrels.jsonl')).filter((q) => {
    if (!convs.has(q.conv_id) || q.category > 4) return false;
    return true;
  });
  // The first questions of each conversation whose evidence lies in the sessions read.
  const picked = [...convs.keys()].flatMap((id) =>
    questions
      .filter((q) => q.conv_id === id)
      .filter((q) =>
        ((q as unknown as { evidence_sessions?: number[] }).evidence_sessions ?? []).every(
          (s) => s <= maxSession,
        ),
      )
      .slice(0, perConversation),
  );
  const turns = [...convs.values()].reduce((n, l) => n + l.length, 0);
  console.log(
    `eval:extraction on ${[...convs.keys()].join(', ')}: ${turns} turns, ${picked.length} questions`,
  );
  const rows: Row[] = [];
  for (const llm of values.llm!.split(',').map((l) => l.trim())) {
    const dataDir = mkdtempSync(join(tmpdir(), 'keepsake-extraction-'));
    try {
      console.log(`running ${llm === 'heuristics' || llm === 'packaged' ? llm : basename(llm)}…`);
      rows.push(await runOne(llm, dataDir, convs, annotations, picked));
      // Each model's row as soon as it is done: a slow model's run takes long.
      console.log(render(rows.slice(-1)));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  console.log(render(rows));
  for (const r of rows) console.log(`${r.model}: seconds per task: ${r.perTask}`);
}

function render(rows: Row[]): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const f = (x: number) => x.toFixed(3);
  return table(
    rows.map((r) => ({
      model: r.model,
      'obs F1': f(r.f1),
      'obs ≥0.5': pct(r.matched),
      'obs cos': f(r.cos),
      'items (precision ≥0.5)': `${r.items} (${pct(r.precision)})`,
      'chunks R-L': f(r.chunks),
      'weeks R-L': f(r.weeks),
      ...Object.fromEntries(
        [1, 2, 3, 4].map((c) => [`answers c${c}`, r.answers[c] ? f(mean(r.answers[c])) : '-']),
      ),
      'tokens/s': r.tokensPerSecond.toFixed(1),
      'run s': r.seconds.toFixed(0),
    })),
  );
}

await main();
