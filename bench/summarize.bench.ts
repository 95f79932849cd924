/**
 * npm run bench:summarize -- [--turns 2000] [--fault-every 10] [--embeddings fake|local]
 *
 * How long rolling summarization takes to settle after a long conversation is imported: the
 * real application on a fresh embedded database, its job worker running in-process, and the
 * scripted OpenAI-compatible test server as the language model (and, by default, embedder).
 * Every `--fault-every`-th summarization request fails, alternating a 503 (an outage: the job
 * waits SUMMARIZATION_RETRY_MS without spending an attempt) and malformed JSON (invalid output:
 * retried with backoff), so the figures include recovery. Reports turns summarized per second,
 * chunks, facts stored and jobs retried, and checks that every turn up to the threshold's tail
 * is covered exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap.js';
import { loadAppConfig } from '../src/app.config.js';
import { SCHEMA_NAME } from '../src/llm/prompts.js';
import { SUMMARIZE_JOB } from '../src/summaries/summaries.service.js';
import {
  FakeOpenAiServer,
  FakeRequest,
  reply,
} from '../test/support/fake-openai/fake-openai.server.js';
import { BENCH_LIMITS, JWT_SECRET, token } from './support.js';

const THRESHOLD = 30;
const BATCH = 20;

function options() {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string', default: '2000' },
      'fault-every': { type: 'string', default: '10' },
      embeddings: { type: 'string', default: 'fake' },
    },
  });
  const turns = Number(values.turns);
  const faultEvery = Number(values['fault-every']);
  if (!Number.isInteger(turns) || turns < 1 || turns > 5000) {
    throw new Error('--turns must be 1 to 5000 (IMPORT_MAX_MESSAGES)');
  }
  if (!Number.isInteger(faultEvery) || faultEvery < 0) {
    throw new Error('--fault-every must be a whole number (0: no faults)');
  }
  if (values.embeddings !== 'fake' && values.embeddings !== 'local') {
    throw new Error('--embeddings must be fake or local');
  }
  return { turns, faultEvery, embeddings: values.embeddings };
}

async function gql<T>(url: string, query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token('bench')}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
  if (body.errors?.length) throw new Error(body.errors[0].message);
  return body.data as T;
}

/** What a member might say about Joe: facts repeat (mentions) and some contradict (supersede). */
const STATEMENTS = [
  'Joe loved fishing on the lake.',
  'Joe worked as a carpenter for thirty years.',
  'Joe was born in Ohio.',
  'Joe kept bees behind the house.',
  'Joe played the piano at church.',
  'Joe always made pancakes on Sunday mornings.',
  'Joe was married to Rose for fifty years.',
  'Joe hated loud music.',
  'Joe was born in Iowa.',
  'Joe retired from carpentry in 1995.',
  'Joe enjoyed fishing at the lake.',
  'Joe built our kitchen table.',
];

function turnText(i: number): string {
  if (i % 2 === 1) return `That sounds wonderful. Tell me more about that time (${i}).`;
  const n = i / 2;
  if (n % 3 === 0) return `${STATEMENTS[(n / 3) % STATEMENTS.length]} We talked about it a lot.`;
  return `It was a cold winter that year, and the roads were bad near the farm (${n}).`;
}

async function main(): Promise<void> {
  const opts = options();
  const fake = await FakeOpenAiServer.start();
  let summaryCalls = 0;
  let outages = 0;
  let malformed = 0;
  const isSummary = (r: FakeRequest) =>
    r.body.response_format?.json_schema?.name === SCHEMA_NAME.summarizeTurns;
  fake.setHandler('chat', (r) => {
    if (!isSummary(r)) return reply.auto();
    summaryCalls++;
    if (opts.faultEvery > 0 && summaryCalls % opts.faultEvery === 0) {
      if ((summaryCalls / opts.faultEvery) % 2 === 1) {
        outages++;
        return reply.error(503);
      }
      malformed++;
      return reply.content('{"summary": "cut off');
    }
    return reply.auto();
  });

  const dataDir = mkdtempSync(join(tmpdir(), 'keepsake-bench-'));
  const config = loadAppConfig({
    ...BENCH_LIMITS,
    DATA_DIR: dataDir,
    JWT_SECRET,
    LOG_LEVEL: 'silent',
    AGENT_REPLY: 'off',
    JOBS_SCHEDULER: 'false',
    JOBS_RETRY_BASE_MS: '200',
    SUMMARIZATION_THRESHOLD: String(THRESHOLD),
    SUMMARIZATION_BATCH: String(BATCH),
    SUMMARIZATION_RETRY_MS: '500',
    LLM: 'openai',
    LLM_BASE_URL: fake.url,
    LLM_MODEL: 'fake',
    MODEL_MAX_RETRIES: '0',
    ...(opts.embeddings === 'fake'
      ? {
          EMBEDDINGS: 'openai',
          EMBEDDINGS_BASE_URL: fake.url,
          EMBEDDINGS_MODEL: 'fake-embed',
          EMBEDDINGS_DIMENSIONS: '512',
        }
      : {}),
  });
  const app = await createApp(config);
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const url = `http://127.0.0.1:${port}/graphql`;
    const ds = app.get(DataSource);
    const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
      url,
      'mutation { createLegacy(input: { name: "Joe" }) { id } }',
    );
    const start = Date.UTC(2015, 0, 1);
    const messages = Array.from({ length: opts.turns }, (_, i) => ({
      role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
      content: turnText(i),
      occurredAt: new Date(start + i * 60_000).toISOString(),
    }));

    const t0 = performance.now();
    const { importConversation } = await gql<{
      importConversation: { conversation: { id: string } };
    }>(
      url,
      `mutation($input: ImportConversationInput!) {
         importConversation(input: $input) { conversation { id } } }`,
      { input: { legacyId: createLegacy.id, messages } },
    );
    const importMs = performance.now() - t0;
    const conversationId = importConversation.conversation.id;

    // Settled: no summarization job waiting or running (deferred ones count as waiting).
    for (;;) {
      const [row] = await ds.query(
        `SELECT count(*)::int AS n FROM jobs WHERE type = $1 AND status IN ('PENDING', 'RUNNING')`,
        [SUMMARIZE_JOB],
      );
      if (row.n === 0) break;
      if (performance.now() - t0 > 30 * 60_000) throw new Error('did not settle in 30 minutes');
      await new Promise((r) => setTimeout(r, 50));
    }
    const settleS = (performance.now() - t0) / 1000;

    const [chunks] = await ds.query(
      `SELECT count(*)::int AS n, coalesce(sum(turn_count), 0)::int AS turns,
              coalesce(min(range_start), 0) AS first, coalesce(max(range_end), -1) AS last
         FROM conversation_chunks WHERE conversation_id = $1`,
      [conversationId],
    );
    const [facts] = await ds.query(
      `SELECT count(*)::int AS n,
              count(*) FILTER (WHERE status = 'ACTIVE')::int AS active,
              count(*) FILTER (WHERE status = 'SUPERSEDED')::int AS superseded,
              coalesce(sum(mention_count), 0)::int AS mentions
         FROM facts WHERE legacy_id = $1`,
      [createLegacy.id],
    );
    const [jobs] = await ds.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE attempts > 1)::int AS retried,
              count(*) FILTER (WHERE status = 'FAILED')::int AS failed
         FROM jobs WHERE type = $1`,
      [SUMMARIZE_JOB],
    );
    // The worker runs one job at a time on the embedded database, so the other modules' jobs
    // for the same turns (search indexing, memory extraction) share the time measured above.
    const others: { type: string; n: number }[] = await ds.query(
      `SELECT type, count(*)::int AS n FROM jobs WHERE type <> $1 AND created_at >= $2
        GROUP BY type ORDER BY type`,
      [SUMMARIZE_JOB, new Date(Date.now() - (performance.now() - t0) - 1000)],
    );
    const expectedChunks = Math.floor(Math.max(0, opts.turns - THRESHOLD - 1) / BATCH) + 1;
    const covered = chunks.turns === chunks.last + 1 && chunks.first === 0;

    const rows: [string, string][] = [
      ['turns imported', String(opts.turns)],
      ['import (one GraphQL call)', `${importMs.toFixed(0)} ms`],
      ['settled after', `${settleS.toFixed(2)} s`],
      ['turns summarized', `${chunks.turns} (turns 0..${chunks.last}, each once: ${covered})`],
      ['turns summarized per second', (chunks.turns / settleS).toFixed(1)],
      ['chunks (one model call each)', `${chunks.n} (expected ${expectedChunks})`],
      ['summarization requests', String(summaryCalls)],
      ['injected outages / malformed answers', `${outages} / ${malformed}`],
      [
        'summarization jobs',
        `${jobs.n} (${jobs.retried} retried after invalid output, ${jobs.failed} failed)`,
      ],
      ['other jobs in the same window', others.map((o) => `${o.type} ${o.n}`).join(', ') || 'none'],
      [
        'facts stored',
        `${facts.n} (${facts.active} active, ${facts.superseded} superseded, ${facts.mentions} mentions)`,
      ],
    ];
    const width = Math.max(...rows.map(([k]) => k.length));
    console.log(
      [
        `Keepsake summarization benchmark: threshold ${THRESHOLD}, batch ${BATCH}, ` +
          `LLM = fake OpenAI-compatible server, embeddings = ${opts.embeddings === 'fake' ? 'fake server (hashed words)' : 'local USE-lite'}`,
        `node ${process.version}, ${process.platform}/${process.arch}, embedded PGlite`,
        '',
        ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`),
      ].join('\n'),
    );
    if (!covered || chunks.n !== expectedChunks || jobs.failed > 0) process.exitCode = 1;
  } finally {
    await app.close();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
