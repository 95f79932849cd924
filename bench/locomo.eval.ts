/**
 * npm run eval:locomo -- --data <dir> [--out run.jsonl] [--first 50] [--conversations conv-26,conv-30]
 *   [--data-dir <dir>] [--trace trace.jsonl] [--rewrite-fake <ms>]
 *
 * LoCoMo retrieval, through the service: each conversation is imported as its own legacy with
 * importConversation (dia_id, speaker and photo caption in metadata, the session time as
 * occurredAt); once background work has settled (indexing, embeddings, summaries), each
 * question is asked with `recall` (top 50) over GraphQL. Results are mapped to the dia_ids they
 * cite and scored: turn-level Recall@5, Recall@10, NDCG@10 and session-level Recall@5, by
 * category and overall, next to the README's BM25 floor. Writes the run file if --out is given.
 * Works on any directory laid out like ../shared/bench/locomo-dev.
 * With --data-dir naming the database of an earlier run, conversations it already holds (a
 * legacy of the same name) are not imported again: only the questions are asked, which is how
 * a change to ranking is measured in a minute. A change to indexing needs a fresh directory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap.js';
import { loadAppConfig } from '../src/app.config.js';
import { EmbeddingService } from '../src/embeddings/embedding.service.js';
import { JobsService } from '../src/jobs/jobs.service.js';
import { INDEX_JOB } from '../src/search/segment-indexer.service.js';
import {
  aggregate,
  diaIdsOf,
  flatRecall,
  flattenRanked,
  formatTable,
  LocomoQuestion,
  percentile,
  QuestionScores,
  readDataset,
  scoreQuestion,
  toImportedMessage,
} from '../src/search/eval/locomo.js';
import { FakeOpenAiServer, reply } from '../test/support/fake-openai/fake-openai.server.js';
import { BENCH_LIMITS, JWT_SECRET, token } from './support.js';

function client(url: string, bearer: string) {
  return async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as {
      data?: T;
      errors?: { message: string; extensions?: { code?: string } }[];
    };
    if (body.errors?.length) {
      const [e] = body.errors;
      throw new Error(`${e.extensions?.code ?? res.status}: ${e.message}`);
    }
    return body.data!;
  };
}

const RECALL = `query($q: String!, $l: ID!, $first: Int) {
  recall(query: $q, legacyId: $l, first: $first) {
    edges { node { id sourceType provenance { messageMetadata } } }
  }
}`;

interface RecallResult {
  recall: {
    edges: {
      node: {
        id: string;
        sourceType: string;
        provenance: { messageMetadata: Record<string, unknown>[] };
      };
    }[];
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string', default: resolve('../shared/bench/locomo-dev') },
      out: { type: 'string' },
      trace: { type: 'string' },
      first: { type: 'string', default: '50' },
      conversations: { type: 'string' },
      'data-dir': { type: 'string' },
      'rewrite-fake': { type: 'string' },
    },
  });
  const dataset = readDataset(resolve(values.data!));
  const only = values.conversations?.split(',').map((c) => c.trim());
  const convIds = [...dataset.conversations.keys()].filter((c) => !only || only.includes(c));
  const questions = dataset.questions.filter((q) => convIds.includes(q.conv_id));
  const first = Number(values.first);

  const dataDir = values['data-dir'] ?? mkdtempSync(join(tmpdir(), 'keepsake-locomo-'));
  const rewriteDelay = values['rewrite-fake'] === undefined ? null : Number(values['rewrite-fake']);
  const fake = rewriteDelay === null ? null : await FakeOpenAiServer.start();
  fake?.setHandler('chat', () => reply.auto(rewriteDelay ?? 0));
  const config = loadAppConfig({
    ...BENCH_LIMITS,
    ...process.env,
    DATA_DIR: dataDir,
    JWT_SECRET,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    AGENT_REPLY: 'off',
    // Background work runs here, drained until it has settled, not on the worker's timer.
    JOBS_WORKER: 'false',
    JOBS_SCHEDULER: 'false',
    ...(fake
      ? {
          LLM: 'openai',
          LLM_BASE_URL: fake.url,
          LLM_MODEL: 'fake',
          SEARCH_QUERY_REWRITE: 'on',
          SEARCH_QUERY_REWRITE_TIMEOUT_MS: '60000',
        }
      : {}),
  });
  const app = await createApp(config);
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const gql = client(`http://127.0.0.1:${port}/graphql`, token('locomo-eval'));

    const started = performance.now();
    const startedAt = Date.now();
    const legacyOf = new Map<string, string>();
    const { legacies } = await gql<{ legacies: { nodes: { id: string; name: string }[] } }>(
      '{ legacies(first: 100) { nodes { id name } } }',
    );
    for (const l of legacies.nodes) legacyOf.set(l.name, l.id);
    let turns = 0;
    let characters = 0;
    let importedCount = 0;
    for (const convId of convIds) {
      const list = dataset.conversations.get(convId)!;
      if (legacyOf.has(convId)) continue;
      importedCount++;
      const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
        'mutation($n: String!) { createLegacy(input: { name: $n }) { id } }',
        { n: convId },
      );
      legacyOf.set(convId, createLegacy.id);
      await gql(
        `mutation($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }`,
        {
          input: {
            legacyId: createLegacy.id,
            title: convId,
            messages: list.map((t) => toImportedMessage(t, list[0].speaker)),
          },
        },
      );
      turns += list.length;
      characters += list.reduce((n, t) => n + t.text.length, 0);
    }
    const imported = performance.now();
    // Indexing runs beside the other background work (summaries, facts): it is done when no
    // indexing job is left; the loop's delay says whether anything stalled the process.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const jobs = app.get(JobsService);
    await jobs.drain({ timeoutMs: 60 * 60 * 1000, types: [INDEX_JOB] });
    const indexed = performance.now();
    await jobs.drain({ timeoutMs: 60 * 60 * 1000 });
    // Vectors a reused import lacks (a kind added since) are the sweeper's, which runs here
    // on no timer: fill them before asking.
    const embeddings = app.get(EmbeddingService);
    let swept = 0;
    for (let n = await embeddings.sweep(); n > 0; n = await embeddings.sweep()) swept += n;
    if (swept > 0) console.log(`embedded ${swept} vectors the import lacked`);
    const settled = performance.now();
    loop.disable();
    const seconds = (from: number, to: number) => ((to - from) / 1000).toFixed(1);
    console.log(
      `imported ${importedCount} conversations (${turns} turns, ${characters} characters) in ${seconds(started, imported)} s`,
    );
    if (turns > 0) {
      const rate = (n: number) => (n / ((indexed - imported) / 1000)).toFixed(0);
      console.log(
        `indexed (split, embedded, stored) in ${seconds(imported, indexed)} s: ${rate(turns)} turns/s, ` +
          `${rate(characters)} characters/s; background work settled in ${seconds(imported, settled)} s; ` +
          `event loop delay meanwhile p50 ${(loop.percentile(50) / 1e6).toFixed(0)} ms, ` +
          `p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms, max ${(loop.max / 1e6).toFixed(0)} ms`,
      );
    }

    const latencies: number[] = [];
    /** Which sources take the top ten places, over all questions. */
    const topTen = new Map<string, number>();
    const scored: { question: LocomoQuestion; scores: QuestionScores }[] = [];
    const lines: string[] = [];
    const trace: string[] = [];
    const flat = { r5: 0, r10: 0 };
    for (const question of questions) {
      const t0 = performance.now();
      const recall = (
        await gql<RecallResult>(RECALL, {
          q: question.question,
          l: legacyOf.get(question.conv_id),
          first,
        })
      ).recall.edges.map((e) => e.node);
      latencies.push(performance.now() - t0);
      for (const r of recall.slice(0, 10)) {
        topTen.set(r.sourceType, (topTen.get(r.sourceType) ?? 0) + 1);
      }
      const results = recall.map((r) => diaIdsOf(r.provenance.messageMetadata));
      scored.push({ question, scores: scoreQuestion(results, question) });
      const ranked = flattenRanked(results);
      flat.r5 += flatRecall(ranked, question, 5);
      flat.r10 += flatRecall(ranked, question, 10);
      lines.push(JSON.stringify({ qid: question.qid, ranked }));
      trace.push(
        JSON.stringify({
          qid: question.qid,
          results: recall.map((r, i) => ({ type: r.sourceType, ids: results[i] })),
        }),
      );
    }
    if (values.out) writeFileSync(resolve(values.out), `${lines.join('\n')}\n`);
    if (values.trace) writeFileSync(resolve(values.trace), `${trace.join('\n')}\n`);

    const pct = (x: number) => x.toFixed(1);
    const rows = aggregate(scored).map((a) => ({
      category: a.label,
      questions: String(a.questions),
      'R@5': pct(a.r5),
      'R@10': pct(a.r10),
      'NDCG@10': pct(a.ndcg10),
      'session R@5': pct(a.sessionR5),
      'distinct-session R@5': pct(a.distinctSessionR5),
      'flat R@5': pct(a.flatR5),
      'flat R@10': pct(a.flatR10),
    }));
    console.log(
      `\n${questions.length} questions (${dataset.skipped} without usable evidence skipped), recall top ${first}`,
    );
    console.log(formatTable(rows));
    if (dataset.floor) {
      console.log(
        `\nBM25 floor (README): R@5 ${dataset.floor.r5}, R@10 ${dataset.floor.r10}` +
          (dataset.floor.sessionR5 !== null ? `, session R@5 ${dataset.floor.sessionR5}` : '') +
          ` (${dataset.floor.retriever})`,
      );
    }
    const n = questions.length || 1;
    console.log(
      `the run file scored as a flat list (each cited turn takes its own place): ` +
        `R@5 ${pct((100 * flat.r5) / n)}, R@10 ${pct((100 * flat.r10) / n)}`,
    );
    const ms = (p: number) => `${percentile(latencies, p).toFixed(1)} ms`;
    console.log(
      `recall latency over GraphQL: p50 ${ms(50)}, p90 ${ms(90)}, p95 ${ms(95)}, p99 ${ms(99)}, ` +
        `max ${Math.max(0, ...latencies).toFixed(1)} ms`,
    );
    const places = [...topTen.values()].reduce((a, b) => a + b, 0) || 1;
    console.log(
      `top-10 places by source: ${[...topTen.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([kind, count]) => `${kind} ${pct((100 * count) / places)}%`)
        .join(', ')}`,
    );
    if (fake) {
      const calls: { n: number; prompt: number; completion: number; ms: number }[] = await app
        .get(DataSource)
        .query(
          `SELECT count(*)::int AS n, avg(prompt_tokens)::float AS prompt,
                  avg(completion_tokens)::float AS completion, avg(duration_ms)::float AS ms
             FROM model_calls WHERE task = 'rewriteQuery' AND created_at >= $1`,
          [new Date(startedAt)],
        );
      const [c] = calls;
      console.log(
        `query rewrite (fake model answering after ${rewriteDelay} ms): ${c.n} calls, ` +
          `${(c.prompt ?? 0).toFixed(0)} prompt + ${(c.completion ?? 0).toFixed(0)} completion tokens ` +
          `and ${(c.ms ?? 0).toFixed(0)} ms a call on average`,
      );
    }
    if (values.out) console.log(`run file: ${resolve(values.out)}`);
  } finally {
    await app.close();
    await fake?.close();
    if (!values['data-dir']) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
