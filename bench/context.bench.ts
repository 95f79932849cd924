/**
 * npm run bench:context -- [--messages 10000] [--users 1] [--memories 1000] [--facts 100]
 *                          [--queries 500] [--per-conversation 1000]
 *                          [--profile] (the statements the service's floor spends its time on)
 *                          [--keep] (leave the database on the server)
 *                          [--server] (without DATABASE_URL: the project's test server, postgres.sh)
 *                          [--replicas N] (a primary of its own and N streaming replicas: context
 *                                          measured again with them taking the reads, side by side)
 *                          [--database NAME] (on the server: that database, filled if new, else
 *                                             measured as it is, and kept)
 *                          [--data-dir DIR] (embedded: that data directory, the same way)
 *
 * Latency of context assembly at scale, on the embedded database or, with DATABASE_URL, on that
 * server (in a database of its own, dropped afterwards). Fills through a bulk path (SQL batches,
 * not GraphQL calls): --users families of one member each share --messages turns (the measured
 * member is one of them), in conversations of --per-conversation turns, with their segments,
 * vectors and full-text statistics and a summary per 20 turns; the measured member also gets
 * --memories memories and --facts facts. Vectors are means of real vectors (the configured
 * encoder's; EMBEDDINGS_LOCAL_MODEL and the service's other variables in the environment apply)
 * of the sentences each text is made of, so similarities behave like real ones without
 * embedding a million texts. Then asks `context` over GraphQL for varied queries in the member's latest
 * conversation and reports p50, p95 and p99 beside two floors:
 * - the reference floor, which does not depend on the service's SQL: the bare HNSW top-50 and
 *   the bare GIN full-text top-50 over the member's turns, timed directly;
 * - the service's floor: the very read statements each request ran, replayed directly.
 * And the storage of turns per 100,000 (tables and indexes).
 *
 * A 100,000-turn fill takes minutes: --database (or --data-dir) keeps what it filled, and a later
 * run with the same name measures it again without filling, so that two builds of the service
 * (before and after a change) can be measured side by side on the same rows.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DataSource, QueryRunner } from 'typeorm';
import { createApp } from '../src/bootstrap.js';
import { loadAppConfig } from '../src/app.config.js';
import { EmbeddingRepository } from '../src/embeddings/embedding.repository.js';
import { EmbeddingService } from '../src/embeddings/embedding.service.js';
import { run, sql } from '../src/database/sql.js';
import { denseTerms } from '../src/embeddings/vector-sql.js';
import { EMBEDDER } from '../src/llm/embedder.js';
import type { Embedder } from '../src/llm/embedder.js';
import { countTokens } from '../src/llm/tokenizer.js';
import { NewSegment, SegmentRepository } from '../src/search/segment.repository.js';
import { toldPeriod } from '../src/search/told-period.js';
import {
  BENCH_LIMITS,
  benchDatabase,
  benchServers,
  benchServerUrl,
  JWT_SECRET,
  percentile,
  table,
  token,
  rng,
  wholeArg,
} from './support.js';
import { KINDS_VERSION, wordKinds } from '../src/search/word-kinds.js';

/** The period a generated turn tells of, as the indexer stores it. */
function told(text: string, at: Date): Pick<NewSegment, 'toldFrom' | 'toldTo'> {
  const period = toldPeriod(text, at, null);
  return { toldFrom: period?.from ?? null, toldTo: period?.to ?? null };
}

const DAY = 86_400_000;

const PEOPLE = [
  'Grandpa Joe',
  'Grandma Rose',
  'Uncle Tom',
  'Aunt May',
  'my father',
  'my mother',
  'cousin Eli',
  'Nana',
  'my brother Sam',
  'the neighbours',
];
const ACTS = [
  'went fishing for walleye',
  'planted tomatoes and beans',
  'repaired an old radio',
  'sang in the choir',
  'baked rye bread',
  'taught me to ride a bicycle',
  'played cribbage all night',
  'drove the old Ford truck',
  'wrote letters from the navy',
  'built a model ship in a bottle',
  'painted the porch blue',
  'kept bees',
  'danced at the harvest fair',
  'read the newspaper aloud',
  'fixed the church roof',
  'walked the dog by the river',
  'made goulash with caraway',
  'knitted scarves for everyone',
  'told stories about the war',
  'collected stamps',
];
const PLACES = [
  'on Lake Erie',
  'in Cleveland',
  'at the allotment',
  'in the garage',
  'at St. Anne’s',
  'in the Pacific',
  'at the county fair',
  'in the kitchen',
  'by the river',
  'in Toledo',
  'at the cabin',
  'in Zanzibar',
];
const WHEN = [
  'every summer',
  'in 1961',
  'after the war',
  'on Sunday mornings',
  'during the winter of 1978',
  'when I was little',
  'last spring',
  'each Christmas',
  'in May',
  'before he retired',
];
const FEELINGS = [
  'It still makes me smile.',
  'I miss that so much.',
  'We laughed about it for years.',
  'Nobody else could do it like that.',
  'I think about it every time it rains.',
];
const CHINESE = [
  '奶奶的花园里有很多玫瑰。',
  '爷爷每年夏天都去湖边钓鱼。',
  '我们以前常常一起包饺子。',
  '他在工厂工作了三十年。',
];
const CODE = [
  '```ts\nexport function parseDate(input: string): Date {\n  return new Date(Date.parse(input));\n}\n```',
  '```py\ndef load_photos(path):\n    return sorted(glob(path + "/*.jpg"))\n```',
];

function sentencePool(random: () => number, size: number): string[] {
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const pool = new Set<string>();
  while (pool.size < size) {
    const r = random();
    if (r < 0.03) pool.add(pick(CHINESE));
    else if (r < 0.05) pool.add(pick(CODE));
    else if (r < 0.15) pool.add(pick(FEELINGS));
    else
      pool.add(
        `${pick(PEOPLE)[0].toUpperCase()}${pick(PEOPLE).slice(1)} ${pick(ACTS)} ${pick(PLACES)} ${pick(WHEN)}.`,
      );
  }
  return [...pool];
}

function queries(random: () => number, n: number): string[] {
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const forms = [
    () => `What did ${pick(PEOPLE)} do ${pick(PLACES)}?`,
    () => `Tell me again how ${pick(PEOPLE)} ${pick(ACTS)}.`,
    () => `Do you remember when ${pick(PEOPLE)} ${pick(ACTS)}?`,
    () => `What did we talk about last week?`,
    () => `${pick(ACTS)} ${pick(WHEN)}`,
    () => `Why did parseDate return an invalid date?`,
    () => `我们之前聊过${pick(['奶奶的花园', '钓鱼', '饺子'])}吗？`,
    () => `Who ${pick(ACTS)}?`,
    () =>
      `Last time you mentioned ${pick(PLACES).replace(/^(on|in|at|by) /, '')}, what was that about?`,
    () => `Grandpa Jo fishng trip`,
  ];
  return Array.from({ length: n }, () => pick(forms)());
}

function mean(vectors: number[][]): number[] {
  const out = new Array<number>(vectors[0].length).fill(0);
  for (const v of vectors) for (let i = 0; i < v.length; i++) out[i] += v[i];
  const norm = Math.sqrt(out.reduce((a, x) => a + x * x, 0)) || 1;
  return out.map((x) => x / norm);
}

interface Captured {
  sql: string;
  params: unknown[] | undefined;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      messages: { type: 'string', default: '10000' },
      memories: { type: 'string', default: '1000' },
      facts: { type: 'string', default: '100' },
      queries: { type: 'string', default: '500' },
      'per-conversation': { type: 'string', default: '1000' },
      warmup: { type: 'string', default: '20' },
      users: { type: 'string', default: '1' },
      profile: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      server: { type: 'boolean', default: false },
      database: { type: 'string' },
      'data-dir': { type: 'string' },
      replicas: { type: 'string', default: '0' },
    },
  });
  const replicas = wholeArg('replicas', values.replicas, 0);
  if (replicas > 0 && (values.database !== undefined || values['data-dir'] !== undefined)) {
    throw new Error('--replicas makes servers of its own: it takes no --database or --data-dir');
  }
  const total = Number(values.messages);
  const users = Math.max(1, Number(values.users));
  const perUser = Math.max(1, Math.floor(total / users));
  const perConversation = Math.max(1, Number(values['per-conversation']));
  const random = rng(42);
  const keptDir = values['data-dir'];
  if (keptDir) mkdirSync(keptDir, { recursive: true });
  const dataDir = keptDir ?? mkdtempSync(join(tmpdir(), 'keepsake-context-bench-'));
  const servers = replicas > 0 ? await benchServers(replicas) : null;
  const serverUrl = servers
    ? servers.url
    : benchServerUrl(values.server || values.database !== undefined);
  const server = serverUrl ? await benchDatabase(serverUrl, values.database) : null;
  const env = {
    // The service's variables set in the environment apply (EMBEDDINGS_LOCAL_MODEL, say).
    ...process.env,
    ...BENCH_LIMITS,
    DATA_DIR: dataDir,
    ...(server ? { DATABASE_URL: server.url } : {}),
    JWT_SECRET,
    LOG_LEVEL: 'warn',
    AGENT_REPLY: 'off',
    JOBS_WORKER: 'false',
    JOBS_SCHEDULER: 'false',
    // One user writes everything here: the bench measures the work, not the abuse limits.
    CONVERSATIONS_PER_USER_PER_DAY: '1000000',
  };
  const config = loadAppConfig(env);
  const app = await createApp(config);
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    const url = `http://127.0.0.1:${port}/graphql`;
    const post = (bearer: string, query: string, variables: Record<string, unknown>) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ query, variables }),
      });
    const gqlAs = async <T>(
      bearer: string,
      query: string,
      variables: Record<string, unknown> = {},
    ): Promise<T> => {
      // The fill blocks the event loop for seconds (index builds): a kept-alive socket the
      // server closed meanwhile fails once; a new one does not.
      const res = await post(bearer, query, variables).catch(() => post(bearer, query, variables));
      const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
      if (body.errors?.length) throw new Error(body.errors[0].message);
      return body.data!;
    };
    const bearer = token('bench-context');
    const gql = <T>(query: string, variables: Record<string, unknown> = {}) =>
      gqlAs<T>(bearer, query, variables);
    const ds = app.get(DataSource);
    const embedder = app.get<Embedder>(EMBEDDER);
    const embeddings = app.get(EmbeddingService);
    const vectorsRepo = app.get(EmbeddingRepository);
    const segmentsRepo = app.get(SegmentRepository);
    const model = (await embeddings.searchModel()).model;

    // --- fill (or reuse) ----------------------------------------------------------------------
    const { me } = await gql<{ me: { id: string } }>('{ me { id } }');
    // A kept database (--database, --data-dir) holds the member's conversations already.
    const [kept] = (await ds.query(
      `SELECT id, legacy_id AS "legacyId" FROM conversations WHERE user_id = $1
        ORDER BY created_at DESC, id DESC LIMIT 1`,
      [me.id],
    )) as { id: string; legacyId: string }[];
    const fill = async (): Promise<{ legacyId: string; current: string }> => {
      const fillStarted = performance.now();
      const { createLegacy } = await gql<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandpa Joe" }) { id } }',
      );
      const legacyId = createLegacy.id;
      const pool = sentencePool(random, 1500);
      const poolVectors: number[][] = [];
      for (let i = 0; i < pool.length; i += 256)
        poolVectors.push(...(await embedder.embed(pool.slice(i, i + 256))));
      const embedded = performance.now();

      // Index builds are faster than row-by-row HNSW inserts: drop, fill, build.
      const kinds = ['segment', 'summary', 'fact', 'memory'];
      for (const kind of kinds) await vectorsRepo.dropIndex(model, kind);

      const text = (n: number) => {
        const ids = Array.from({ length: n }, () => Math.floor(random() * pool.length));
        return {
          content: ids.map((i) => pool[i]).join(' '),
          vector: mean(ids.map((i) => poolVectors[i])),
        };
      };

      /** A family: one member, one legacy; the measured member is the first. */
      interface Family {
        userId: string;
        legacyId: string;
        bearer: string;
      }
      const families: Family[] = [{ userId: me.id, legacyId, bearer }];
      for (let u = 1; u < users; u++) {
        const other = token(`bench-family-${u}`);
        const who = await gqlAs<{ me: { id: string } }>(other, '{ me { id } }');
        const legacy = await gqlAs<{ createLegacy: { id: string } }>(
          other,
          'mutation { createLegacy(input: { name: "Nana" }) { id } }',
        );
        families.push({ userId: who.me.id, legacyId: legacy.createLegacy.id, bearer: other });
      }

      const taxonomy = await wordKinds();
      /** One conversation of `count` turns of a family, in batches of at most 2,000. */
      const fillConversation = async (f: Family, c: number, count: number, of: number) => {
        const { startConversation } = await gqlAs<{ startConversation: { id: string } }>(
          f.bearer,
          'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
          { l: f.legacyId },
        );
        const conversationId = startConversation.id;
        const base = start + (c / of) * 720 * DAY;
        for (let offset = 0; offset < count; offset += 2000) {
          const batch = Array.from({ length: Math.min(2000, count - offset) }, (_, k) => {
            const i = offset + k;
            const t = text(1 + Math.floor(random() * 3));
            return { i, ...t, at: new Date(base + (i / count) * 7 * DAY) };
          });
          await ds.transaction(async (m) => {
            const rows: { id: string; turn_index: number }[] = await m.query(
              `INSERT INTO messages (conversation_id, legacy_id, user_id, turn_index, role, content,
                                   token_count, metadata, occurred_at)
             SELECT $1, $2, $3, t.turn, CASE WHEN t.turn % 2 = 0 THEN 'USER' ELSE 'ASSISTANT' END,
                    t.content, t.tokens, '{}'::jsonb, t.at
               FROM unnest($4::int[], $5::text[], $6::int[], $7::timestamptz[]) AS t(turn, content, tokens, at)
             RETURNING id, turn_index`,
              [
                conversationId,
                f.legacyId,
                f.userId,
                batch.map((b) => b.i),
                batch.map((b) => b.content),
                batch.map((b) => countTokens(b.content)),
                batch.map((b) => b.at),
              ],
            );
            const idOf = new Map(rows.map((r) => [r.turn_index, r.id]));
            const segments: NewSegment[] = batch.map((b, k) => ({
              messageId: idOf.get(b.i)!,
              conversationId,
              legacyId: f.legacyId,
              userId: f.userId,
              turnIndex: b.i,
              position: 0,
              role: b.i % 2 === 0 ? 'USER' : 'ASSISTANT',
              speaker: null,
              caption: null,
              context: k > 0 ? batch[k - 1].content.slice(-400) : null,
              content: b.content,
              isCode: b.content.startsWith('```'),
              language: null,
              charStart: 0,
              charEnd: b.content.length,
              tokenCount: countTokens(b.content),
              occurredAt: b.at,
              ...told(b.content, b.at),
              kinds: b.content.startsWith('```') ? null : taxonomy.kindsOf(b.content),
              kindsVersion: KINDS_VERSION,
            }));
            const inserted = await segmentsRepo.insert(m, segments);
            const vectorOf = new Map(batch.map((b) => [idOf.get(b.i)!, b.vector]));
            await vectorsRepo.upsert(
              'segment',
              model,
              inserted.map((s) => ({
                itemId: s.id,
                vector: vectorOf.get(s.messageId)!,
                legacyId: f.legacyId,
                userId: f.userId,
              })),
              m,
            );
            await segmentsRepo.addToStats(
              m,
              inserted.map((s) => s.id),
            );
            // A summary of every 20 turns, as the summaries module would write.
            const chunks = batch.filter((b) => b.i % 20 === 19);
            if (chunks.length > 0) {
              const summaries = chunks.map(() => text(3));
              const ids: { id: string }[] = await m.query(
                `INSERT INTO conversation_chunks (conversation_id, legacy_id, user_id, range_start,
                 range_end, content, structured, turn_count, token_count, model,
                 first_occurred_at, last_occurred_at)
               SELECT $1, $2, $3, t.e - 19, t.e, t.content, '{}'::jsonb, 20, 60, 'bench', t.at, t.at
                 FROM unnest($4::int[], $5::text[], $6::timestamptz[]) AS t(e, content, at)
               RETURNING id`,
                [
                  conversationId,
                  f.legacyId,
                  f.userId,
                  chunks.map((b) => b.i),
                  summaries.map((s) => s.content),
                  chunks.map((b) => b.at),
                ],
              );
              await vectorsRepo.upsert(
                'summary',
                model,
                ids.map((r, k) => ({
                  itemId: r.id,
                  vector: summaries[k].vector,
                  legacyId: f.legacyId,
                  userId: f.userId,
                })),
                m,
              );
            }
            await m.query(`UPDATE conversations SET next_turn_index = $2 WHERE id = $1`, [
              conversationId,
              offset + batch.length,
            ]);
          });
        }
        return conversationId;
      };

      // Families take turns, a conversation each, so that a member's rows are spread through the
      // tables as they are when many families talk at once.
      const conversations = Math.max(1, Math.ceil(perUser / perConversation));
      const start = Date.now() - 730 * DAY;
      let current = '';
      let written = 0;
      let lastReport = performance.now();
      for (let c = 0; c < conversations; c++) {
        const count = Math.min(perConversation, perUser - c * perConversation);
        for (const [u, f] of families.entries()) {
          const id = await fillConversation(f, c, count, conversations);
          if (u === 0) current = id;
          written += count;
          if (performance.now() - lastReport > 30_000) {
            lastReport = performance.now();
            const rate = written / ((lastReport - embedded) / 1000);
            console.log(`  ${written} of ${perUser * users} turns, ${rate.toFixed(0)} turns/s`);
          }
        }
      }
      const others = async (kind: 'memory' | 'fact', n: number) => {
        for (let offset = 0; offset < n; offset += 2000) {
          const batch = Array.from({ length: Math.min(2000, n - offset) }, () => text(1));
          const rows: { id: string }[] =
            kind === 'memory'
              ? await ds.query(
                  `INSERT INTO memories (user_id, legacy_id, type, content, normalized, confidence, source,
                                       status, valid_from, created_at, updated_at)
                 SELECT $1, $2, 'FACT', c, lower(c) || ' ' || n, 0.9, 'MANUAL', 'ACTIVE', now(), now(), now()
                   FROM unnest($3::text[]) WITH ORDINALITY AS t(c, n)
                 RETURNING id`,
                  [me.id, legacyId, batch.map((b) => b.content)],
                )
              : await ds.query(
                  `INSERT INTO facts (legacy_id, author_id, category, content, normalized, visibility,
                                    confidence)
                 SELECT $1, $2, 'OTHER', left(c, 1000), lower(c) || ' ' || n,
                        CASE WHEN n % 2 = 0 THEN 'SHARED' ELSE 'PRIVATE' END, 0.9
                   FROM unnest($3::text[]) WITH ORDINALITY AS t(c, n)
                 RETURNING id`,
                  [legacyId, me.id, batch.map((b) => b.content)],
                );
          await vectorsRepo.upsert(
            kind,
            model,
            rows.map((r, k) => ({
              itemId: r.id,
              vector: batch[k].vector,
              legacyId,
              userId: me.id,
            })),
          );
        }
      };
      await others('memory', Number(values.memories));
      await others('fact', Number(values.facts));
      const filled = performance.now();
      // PGlite, a 32-bit build, takes less than 2 GB.
      await ds.query(`SET maintenance_work_mem = '${server ? '2GB' : '1GB'}'`);
      await embeddings.reconcile();
      await ds.query(`RESET maintenance_work_mem`);
      await ds.query('ANALYZE');
      const indexed = performance.now();
      console.log(
        `filled ${written} turns of ${users} families (${conversations} conversations each), ${values.memories} memories, ${values.facts} facts: ` +
          `pool embedded in ${((embedded - fillStarted) / 1000).toFixed(1)} s, rows in ${((filled - embedded) / 1000).toFixed(1)} s, ` +
          `HNSW indexes built in ${((indexed - filled) / 1000).toFixed(1)} s`,
      );
      return { legacyId, current };
    };

    const { legacyId, current } = kept
      ? { legacyId: kept.legacyId, current: kept.id }
      : await fill();
    if (kept) console.log('measuring the rows filled before (no fill)');

    // --- measure ----------------------------------------------------------------------------
    const captured: Captured[] = [];
    let capturing = false;
    const probe = ds.createQueryRunner();
    const proto = Object.getPrototypeOf(probe) as QueryRunner;
    await probe.release();
    const saved = proto.query;
    const original = saved as unknown as (
      this: QueryRunner,
      ...args: unknown[]
    ) => Promise<unknown>;
    proto.query = function (this: QueryRunner, ...args: unknown[]) {
      if (capturing) captured.push({ sql: args[0] as string, params: args[1] as unknown[] });
      return original.apply(this, args);
    } as unknown as QueryRunner['query'];

    const statementMs = new Map<string, number>();
    /** Per measured query: its time over GraphQL and its statements' replayed times. */
    const perQuery: { elapsed: number; statements: Map<string, number> }[] = [];
    let lastStatements = new Map<string, number>();
    // A runner per replay, released after it: the embedded pool has one connection, which the
    // service needs between replays.
    const replay = async (statements: Captured[]) => {
      const runner = ds.createQueryRunner();
      await runner.connect();
      try {
        const t0 = performance.now();
        lastStatements = new Map();
        for (const s of statements) {
          const s0 = performance.now();
          await original.call(runner, s.sql, s.params);
          const key = s.sql.replace(/\s+/g, ' ').trim().slice(0, 110);
          const ms = performance.now() - s0;
          statementMs.set(key, (statementMs.get(key) ?? 0) + ms);
          lastStatements.set(key, (lastStatements.get(key) ?? 0) + ms);
        }
        return performance.now() - t0;
      } finally {
        await runner.release();
      }
    };
    // The reference floor: the two index scans any hybrid search of the member's turns needs,
    // written as plainly as pgvector and PostgreSQL allow, whatever the service's own SQL.
    const bareFloor = async (q: string, vector: number[]) => {
      const dense = denseTerms({ model, dimensions: embedder.dimensions, vector }, 'segment');
      const t0 = performance.now();
      await run(
        ds,
        sql`SELECT e.item_id FROM embeddings e
          WHERE ${dense.filter} AND e.legacy_id = ${legacyId} AND e.user_id = ${me.id}
          ORDER BY ${dense.distance} LIMIT 50`,
      );
      const t1 = performance.now();
      await run(
        ds,
        sql`SELECT x.id FROM message_segments x, websearch_to_tsquery('english', ${q}) AS q
          WHERE x.legacy_id = ${legacyId} AND x.user_id = ${me.id} AND x.search_tsv @@ q
          ORDER BY ts_rank(x.search_tsv, q) DESC LIMIT 50`,
      );
      return { hnsw: t1 - t0, gin: performance.now() - t1 };
    };
    const bareHnsw: number[] = [];
    const bareGin: number[] = [];
    const bareBoth: number[] = [];
    const CONTEXT = `query($c: ID!, $q: String!) { context(conversationId: $c, query: $q) { tokenCount truncated items { recallItemId } } }`;
    // Their own generator: the same queries whether this run filled the rows or reused them.
    const list = queries(rng(7), Number(values.queries) + Number(values.warmup));
    const service: number[] = [];
    const floor: number[] = [];
    const embed: number[] = [];
    let items = 0;
    for (const [i, q] of list.entries()) {
      captured.length = 0;
      capturing = true;
      const t0 = performance.now();
      const { context } = await gql<{ context: { items: unknown[] } }>(CONTEXT, { c: current, q });
      const elapsed = performance.now() - t0;
      capturing = false;
      // The floor: every read the request made, run directly (the metrics row is a write).
      const reads = captured.filter((s) => !/^\s*INSERT INTO retrieval_metrics/i.test(s.sql));
      const sqlMs = await replay(reads);
      const e0 = performance.now();
      const [qv] = await embedder.embed([q]);
      const embedMs = performance.now() - e0;
      const bare = await bareFloor(q, qv);
      if (i < Number(values.warmup)) continue;
      bareHnsw.push(bare.hnsw);
      bareGin.push(bare.gin);
      bareBoth.push(bare.hnsw + bare.gin);
      service.push(elapsed);
      perQuery.push({ elapsed, statements: lastStatements });
      floor.push(sqlMs);
      embed.push(embedMs + sqlMs);
      items += context.items.length;
    }
    proto.query = saved;

    const row = (name: string, xs: number[]) => ({
      measure: name,
      p50: percentile(xs, 50).toFixed(1),
      p95: percentile(xs, 95).toFixed(1),
      p99: percentile(xs, 99).toFixed(1),
    });
    console.log(
      `\n${service.length} context queries (${(items / service.length).toFixed(1)} items each on average), ms:`,
    );
    console.log(
      table([
        row('context over GraphQL', service),
        row('reference: bare HNSW top-50', bareHnsw),
        row('reference: bare GIN full-text top-50', bareGin),
        row('reference: both', bareBoth),
        row("service's floor: its reads, direct", floor),
        row("service's floor + query embedding", embed),
      ]),
    );
    if (servers && server) {
      // The same queries again, through an instance whose reads go to the replicas.
      await servers.caughtUp();
      const replicaApp = await createApp(
        loadAppConfig({
          ...env,
          DATABASE_REPLICA_URLS: servers.replicaUrls(server.url).join(','),
        }),
      );
      const onReplicas: number[] = [];
      try {
        await replicaApp.listen(0, '127.0.0.1');
        const { port: rport } = replicaApp.getHttpServer().address() as { port: number };
        for (const [i, q] of list.entries()) {
          const t0 = performance.now();
          const res = await fetch(`http://127.0.0.1:${rport}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
            body: JSON.stringify({ query: CONTEXT, variables: { c: current, q } }),
          });
          const body = (await res.json()) as { errors?: { message: string }[] };
          if (body.errors?.length) throw new Error(body.errors[0].message);
          if (i >= Number(values.warmup)) onReplicas.push(performance.now() - t0);
        }
      } finally {
        await replicaApp.close();
      }
      const label = `${replicas} replica${replicas > 1 ? 's' : ''}`;
      console.log(`\ncontext over GraphQL, the same ${service.length} queries, side by side (ms):`);
      console.log(
        table([
          { ...row('primary alone (its read pool)', service) },
          { ...row(`${label} taking the reads`, onReplicas) },
        ]),
      );
    }
    const [size] = (await ds.query(
      `SELECT pg_total_relation_size('messages')::float8 AS messages,
              pg_relation_size('message_segments')::float8 AS segments,
              (pg_total_relation_size('message_segments') - pg_relation_size('message_segments'))::float8
                AS "segmentIndexes",
              pg_relation_size('message_segments_search_tsv_idx')::float8 AS "fullText",
              (SELECT sum(pg_column_size(e.*)) FROM embeddings e WHERE e.kind = 'segment')::float8
                AS vectors,
              pg_total_relation_size('search_term_stats')::float8 AS "termStats",
              (SELECT count(*) FROM messages)::float8 AS turns`,
    )) as Record<string, number>[];
    const turns = size.turns;
    const mb = (bytes: number) => ((bytes * 100_000) / turns / 1024 / 1024).toFixed(1);
    console.log(`\nstorage per 100,000 turns (MB), ${turns} turns in all:`);
    console.log(
      table([
        {
          messages: mb(size.messages),
          segments: mb(size.segments),
          'segment indexes': mb(size.segmentIndexes),
          'full-text index': mb(size.fullText),
          'turn vectors (rows)': mb(size.vectors),
          'term statistics': mb(size.termStats),
          'full-text index / table': `${((100 * size.fullText) / size.segments).toFixed(0)}%`,
        },
      ]),
    );
    if (values.profile) {
      const n = service.length;
      console.log('\nfloor time by statement, mean ms per query (all queries):');
      for (const [sql, ms] of [...statementMs].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
        console.log(`${(ms / n).toFixed(1).padStart(8)}  ${sql}`);
      }
      // The tail: what the slowest tenth of the queries spent their time on.
      const p90 = percentile(service, 90);
      const slow = perQuery.filter((q) => q.elapsed >= p90);
      const tail = new Map<string, number>();
      for (const q of slow) {
        for (const [sql, ms] of q.statements) tail.set(sql, (tail.get(sql) ?? 0) + ms);
      }
      console.log(`\nthe same for the slowest ${slow.length} queries (at or above p90):`);
      for (const [sql, ms] of [...tail].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
        console.log(`${(ms / slow.length).toFixed(1).padStart(8)}  ${sql}`);
      }
    }
    const p95 = percentile(service, 95);
    console.log(
      `p95 ratio: ${(p95 / percentile(floor, 95)).toFixed(2)}x the SQL floor, ` +
        `${(p95 / percentile(embed, 95)).toFixed(2)}x the SQL floor plus the query embedding`,
    );
  } finally {
    await app.close();
    if (!keptDir) rmSync(dataDir, { recursive: true, force: true });
    if (server && !values.keep && values.database === undefined) await server.drop();
    servers?.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
