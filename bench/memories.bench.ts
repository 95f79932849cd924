/**
 * npm run bench:memories -- [--memories 1000] [--exchanges 200] [--queries 100]
 *
 * The memories pipeline on a fresh embedded database with the offline models (heuristic
 * extraction, USE-lite embeddings): importing N memories and embedding them, the memory block
 * of a reply (query embedding + ranking SQL, and the SQL alone), search, rememberThis, and
 * extraction throughput after assistant turns.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap.js';
import { loadAppConfig } from '../src/app.config.js';
import { ConversationsService } from '../src/conversations/conversations.service.js';
import { MessageRole } from '../src/conversations/message-role.enum.js';
import { EmbeddingService } from '../src/embeddings/embedding.service.js';
import { UsersService } from '../src/identity/users.service.js';
import { JobsService } from '../src/jobs/jobs.service.js';
import { LegaciesService } from '../src/legacies/legacies.service.js';
import { MemoriesService } from '../src/memories/memories.service.js';
import {
  MEMORY_TYPE_WEIGHTS,
  MemoryContextProvider,
} from '../src/memories/memory-context.provider.js';
import { MemoryRepository } from '../src/memories/memory.repository.js';
import { BENCH_LIMITS, percentile } from './support.js';

function options() {
  const { values } = parseArgs({
    options: {
      memories: { type: 'string', default: '1000' },
      exchanges: { type: 'string', default: '200' },
      queries: { type: 'string', default: '100' },
    },
  });
  const n = (name: string, raw: string) => {
    const v = Number(raw);
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a whole number`);
    return v;
  };
  return {
    memories: n('memories', values.memories),
    exchanges: n('exchanges', values.exchanges),
    queries: n('queries', values.queries),
  };
}

const PEOPLE = ['my sister Anna', 'my brother Tom', 'my daughter Mia', 'my friend Jo', 'my dad'];
const ACTIVITIES = [
  'hiking in the hills',
  'baking sourdough bread',
  'playing the cello',
  'reading crime novels',
  'growing tomatoes',
  'swimming in the sea',
  'painting watercolours',
  'fixing old clocks',
];
const PLACES = ['Porto', 'Leeds', 'Cork', 'Lyon', 'Bergen', 'Tartu', 'Lecce', 'Ghent'];

function sentence(i: number): { content: string; type: string } {
  const a = ACTIVITIES[i % ACTIVITIES.length];
  const p = PEOPLE[(i * 3) % PEOPLE.length];
  const place = PLACES[(i * 5) % PLACES.length];
  switch (i % 5) {
    case 0:
      return { content: `I love ${a} with ${p} near ${place} (${i}).`, type: 'PREFERENCE' };
    case 1:
      return { content: `I want to try ${a} in ${place} with ${p} (${i}).`, type: 'GOAL' };
    case 2:
      return { content: `Every weekend I go ${a} near ${place} (${i}).`, type: 'PATTERN' };
    case 3:
      return {
        content: `${p} taught me ${a} when we lived in ${place} (${i}).`,
        type: 'RELATIONSHIP',
      };
    default:
      return { content: `I felt calm ${a} in ${place} last spring (${i}).`, type: 'EMOTION' };
  }
}

const QUERIES = [
  'What do I like doing at weekends?',
  'Tell me about my sister',
  'Where did we live when I was young?',
  'What are my plans for this year?',
  'Do I play any instrument?',
  'What makes me feel calm?',
  'Who taught me to bake?',
  'Have I been to Porto?',
];

const ms = (x: number) => `${x.toFixed(1)} ms`;

async function timed(times: number[], run: () => Promise<unknown>): Promise<void> {
  const t = performance.now();
  await run();
  times.push(performance.now() - t);
}

async function main(): Promise<void> {
  const opts = options();
  const dir = mkdtempSync(join(tmpdir(), 'keepsake-bench-memories-'));
  const config = loadAppConfig({
    ...BENCH_LIMITS,
    ...process.env,
    DATA_DIR: dir,
    JWT_SECRET: randomUUID() + randomUUID(),
    LOG_LEVEL: 'error',
    JOBS_WORKER: 'false',
    JOBS_SCHEDULER: 'false',
    AGENT_REPLY: 'off',
    MEMORY_MAX_ACTIVE: String(Math.max(1000, opts.memories)),
    MEMORY_EXTRACTIONS_PER_MINUTE: '100000',
  });
  const app = await createApp(config);
  await app.init();
  const rows: [string, string][] = [];
  try {
    const users = app.get(UsersService);
    const user = await users.fromClaims({
      subject: 'bench-memories',
      email: null,
      emailStated: false,
      name: 'Bench',
      admin: false,
      expiresAt: new Date(Date.now() + 3600_000),
    });
    const { legacy } = await app.get(LegaciesService).create(user, { name: 'Nana' });
    const memories = app.get(MemoriesService);
    const embeddings = app.get(EmbeddingService);

    const file = JSON.stringify({
      memories: Array.from({ length: opts.memories }, (_, i) => ({
        id: `bench-${i}`,
        ...sentence(i),
        confidence: 0.7 + (i % 30) / 100,
        legacyId: legacy.id,
        referenceCount: i % 7,
      })),
    });
    let t = performance.now();
    const imported = await memories.import(user, file);
    rows.push([`importMemories, ${opts.memories} memories (rows only)`, ms(performance.now() - t)]);
    t = performance.now();
    let embedded = 0;
    for (let n = await embeddings.sweep(); n > 0; n = await embeddings.sweep()) embedded += n;
    const sweepMs = performance.now() - t;
    rows.push([
      `sweeper embeds them (${embedded} vectors)`,
      `${ms(sweepMs)} (${((embedded / sweepMs) * 1000).toFixed(0)} /s)`,
    ]);
    if (imported.importedCount !== opts.memories) {
      throw new Error(`imported ${imported.importedCount} of ${opts.memories}`);
    }

    const conversation = await app
      .get(ConversationsService)
      .start(user, { legacyId: legacy.id, remember: true });
    const provider = app.get(MemoryContextProvider);
    const repo = app.get(MemoryRepository);
    const block: number[] = [];
    const sqlOnly: number[] = [];
    const vectors = await Promise.all(QUERIES.map((q) => embeddings.embedQuery(q)));
    for (let i = 0; i < opts.queries; i++) {
      const query = QUERIES[i % QUERIES.length];
      await timed(block, () =>
        provider.collect({
          user,
          conversation,
          legacy,
          query,
          recentMessageIds: new Set(),
          recentStartTurn: 0,
          now: new Date(),
        }),
      );
      await timed(sqlOnly, () =>
        repo.contextCandidates({
          userId: user.id,
          legacyId: legacy.id,
          now: new Date(),
          typeWeights: MEMORY_TYPE_WEIGHTS,
          q: vectors[i % QUERIES.length],
          relevanceWeight: 1,
          limit: 50,
          scoreAllMax: config.env.MEMORY_CONTEXT_SCORE_ALL,
        }),
      );
    }
    rows.push([
      `memory block of a reply, ${opts.queries} queries: p50 / p95`,
      `${ms(percentile(block, 50))} / ${ms(percentile(block, 95))}`,
    ]);
    rows.push([
      '  of which the ranking SQL alone: p50 / p95',
      `${ms(percentile(sqlOnly, 50))} / ${ms(percentile(sqlOnly, 95))}`,
    ]);

    const search: number[] = [];
    for (let i = 0; i < opts.queries; i++) {
      await timed(search, () =>
        memories.list(user, { search: QUERIES[i % QUERIES.length] }, { first: 20 }),
      );
    }
    rows.push([
      `memories(filter: { search }) keyword + meaning: p50 / p95`,
      `${ms(percentile(search, 50))} / ${ms(percentile(search, 95))}`,
    ]);

    const remember: number[] = [];
    for (let i = 0; i < 50; i++) {
      await timed(remember, () =>
        memories.rememberThis(user, {
          content: `Note ${i}: ${PLACES[i % PLACES.length]} has the best ${ACTIVITIES[(i * 3) % 8]}.`,
          legacyId: legacy.id,
        }),
      );
    }
    rows.push([
      'rememberThis (embed, dedupe, insert, cap): p50 / p95',
      `${ms(percentile(remember, 50))} / ${ms(percentile(remember, 95))}`,
    ]);

    const log = app.get(ConversationsService);
    for (let i = 0; i < opts.exchanges; i++) {
      const place = PLACES[i % PLACES.length];
      await log.append(conversation, {
        role: MessageRole.USER,
        authorId: conversation.userId,
        content: `My favourite city is ${place}. I want to learn ${ACTIVITIES[i % 8]} (${i}).`,
      });
      await log.append(conversation, {
        role: MessageRole.ASSISTANT,
        authorId: conversation.userId,
        content: 'Tell me more.',
      });
    }
    t = performance.now();
    await app.get(JobsService).drain({ timeoutMs: 600_000 });
    const drainMs = performance.now() - t;
    const [ledger] = await app.get(DataSource).query(
      `SELECT count(*)::int AS turns, sum(created_count)::int AS created,
                sum(merged_count)::int AS merged, sum(superseded_count)::int AS superseded
           FROM memory_extractions WHERE user_id = $1`,
      [user.id],
    );
    rows.push([
      `extraction jobs, ${opts.exchanges} exchanges`,
      `${ms(drainMs)} (${((ledger.turns / drainMs) * 1000).toFixed(1)} exchanges/s; ` +
        `${ledger.created} created, ${ledger.merged} merged, ${ledger.superseded} superseded)`,
    ]);
    const width = Math.max(...rows.map((r) => r[0].length));
    for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
  } finally {
    // Closing the application ends the process (shutdown hooks): clean up on the way out.
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await app.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
