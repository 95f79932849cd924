import { DataSource } from 'typeorm';
import { loadAppConfig } from '../../../src/app.config.js';
import { openDataSource } from '../../../src/database/database.module.js';
import { openEmbeddedPostgres } from '../../../src/database/embedded-postgres.js';
import { Ledger } from './family.js';
import { sha256 } from './clients.js';

type Query = <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;

/** Opens the service's database directly (the service stopped), for the checks. */
export async function withDatabase<T>(
  env: Record<string, string>,
  fn: (query: Query) => Promise<T>,
): Promise<T> {
  const config = loadAppConfig({ ...env, JWT_SECRET: 'x'.repeat(32), LOG_LEVEL: 'silent' });
  const embedded = config.embedded ? await openEmbeddedPostgres(env.DATA_DIR) : null;
  let ds: DataSource | null = null;
  try {
    ds = await openDataSource(config, embedded);
    const source = ds;
    return await fn(
      <R>(text: string, params: unknown[] = []) => source.query(text, params) as Promise<R[]>,
    );
  } finally {
    await ds?.destroy();
    await embedded?.close();
  }
}

/**
 * What must hold after any number of kills: every acknowledged write is there, once; turn
 * indexes are gapless; uploads are whole or absent; nothing derived was made twice. Answers the
 * problems found (empty when all holds), each a line that says what and where.
 */
export async function acknowledgedWritesHold(query: Query, ledger: Ledger): Promise<string[]> {
  const problems: string[] = [];

  // Turns: each acknowledged one once, with its content; an unacknowledged one at most once.
  const rows = await query<{
    id: string;
    conversation_id: string;
    content: string;
    client_message_id: string;
  }>(
    `SELECT id, conversation_id, content, client_message_id FROM messages WHERE client_message_id IS NOT NULL`,
  );
  const byClientId = new Map<string, typeof rows>();
  for (const r of rows)
    byClientId.set(r.client_message_id, [...(byClientId.get(r.client_message_id) ?? []), r]);
  for (const [clientId, turn] of ledger.turns) {
    const stored = byClientId.get(clientId) ?? [];
    if (stored.length > 1) problems.push(`turn ${clientId} stored ${stored.length} times`);
    if (turn.acked) {
      const row = stored.find((s) => s.id === turn.messageId);
      if (!row) problems.push(`acknowledged turn ${clientId} (${turn.messageId}) is missing`);
      else if (row.content !== turn.content || row.conversation_id !== turn.conversationId)
        problems.push(`acknowledged turn ${clientId} changed`);
    }
  }

  const gaps = await query<{
    conversation_id: string;
    n: number;
    lo: number;
    hi: number;
    next: number;
  }>(
    `SELECT c.id AS conversation_id, count(m.id)::int AS n, coalesce(min(m.turn_index), 0) AS lo,
            coalesce(max(m.turn_index), -1) AS hi, c.next_turn_index AS next
       FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id
      GROUP BY c.id, c.next_turn_index`,
  );
  for (const g of gaps) {
    if (g.lo !== 0 && g.n > 0)
      problems.push(`conversation ${g.conversation_id} starts at turn ${g.lo}`);
    if (g.hi !== g.n - 1)
      problems.push(`conversation ${g.conversation_id} has gaps: ${g.n} turns up to ${g.hi}`);
    if (g.next !== g.n)
      problems.push(
        `conversation ${g.conversation_id} would number its next turn ${g.next}, not ${g.n}`,
      );
  }

  // Imports: an acknowledged one whole and in order; one whose answer was lost whole or absent.
  const imported = await query<{ id: string; title: string; n: number; contents: string[] }>(
    `SELECT c.id, c.title, count(m.id)::int AS n,
            coalesce(array_agg(m.content ORDER BY m.turn_index) FILTER (WHERE m.id IS NOT NULL), '{}') AS contents
       FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id
      WHERE c.imported GROUP BY c.id, c.title`,
  );
  for (const entry of ledger.imports) {
    const found = imported.filter((c) => c.title === entry.title);
    if (found.length > 1) problems.push(`import "${entry.title}" stored ${found.length} times`);
    if (entry.acked && !found.some((c) => c.id === entry.conversationId))
      problems.push(`acknowledged import "${entry.title}" is missing`);
    for (const c of found) {
      if (JSON.stringify(c.contents) !== JSON.stringify(entry.contents))
        problems.push(
          `import "${entry.title}" holds ${c.n} of ${entry.contents.length} turns, or others`,
        );
    }
  }

  // Stories: whole or absent, the file byte for byte.
  const stories = await query<{ id: string; title: string; digest: string | null }>(
    `SELECT s.id, s.title, encode(sha256(f.content), 'hex') AS digest
       FROM stories s LEFT JOIN story_files f ON f.story_id = s.id`,
  );
  for (const entry of ledger.stories) {
    const found = stories.filter((s) => s.title === entry.title);
    if (found.length > 1) problems.push(`upload "${entry.title}" stored ${found.length} times`);
    if (entry.acked && !found.some((s) => s.id === entry.id))
      problems.push(`acknowledged upload "${entry.title}" is missing`);
    for (const s of found) {
      if (s.digest !== entry.sha256)
        problems.push(`upload "${entry.title}" has ${s.digest ? 'other bytes' : 'no file'}`);
    }
  }
  const orphans = await query<{ n: number }>(
    `SELECT count(*)::int AS n FROM story_files f WHERE NOT EXISTS (SELECT 1 FROM stories s WHERE s.id = f.story_id)`,
  );
  if (orphans[0].n > 0) problems.push(`${orphans[0].n} stored files belong to no story`);
  void sha256;

  // Facts, shares, memories and forgetting.
  const facts = new Map(
    (
      await query<{ id: string; content: string; visibility: string; status: string }>(
        `SELECT id, content, visibility, status FROM facts`,
      )
    ).map((f) => [f.id, f]),
  );
  for (const entry of ledger.facts.filter((f) => f.acked)) {
    const fact = facts.get(entry.id!);
    if (!fact) problems.push(`acknowledged fact ${entry.id} is missing`);
    else if (fact.status === 'DELETED') problems.push(`acknowledged fact ${entry.id} is deleted`);
    else if (entry.shared === 'yes' && fact.visibility !== 'SHARED')
      problems.push(`acknowledged share of fact ${entry.id} is lost (${fact.visibility})`);
  }
  const memories = new Map(
    (await query<{ id: string; status: string }>(`SELECT id, status FROM memories`)).map((m) => [
      m.id,
      m,
    ]),
  );
  for (const entry of ledger.memories.filter((m) => m.acked)) {
    const memory = memories.get(entry.id!);
    if (!memory) problems.push(`acknowledged memory ${entry.id} is missing`);
    else if (entry.forgotten === 'yes' && memory.status !== 'DELETED')
      problems.push(`acknowledged forgetting of memory ${entry.id} is lost (${memory.status})`);
    else if (entry.forgotten === 'no' && memory.status === 'DELETED')
      problems.push(`memory ${entry.id} is forgotten although nobody asked`);
  }
  return problems;
}

/** Once the background work has settled: every job done once, every derived row made once. */
export async function backgroundWorkSettled(query: Query): Promise<string[]> {
  const problems: string[] = [];
  const jobs = await query<{ type: string; status: string; n: number; error: string | null }>(
    `SELECT type, status, count(*)::int AS n, max(last_error) AS error FROM jobs
      WHERE status = 'RUNNING' OR status = 'FAILED' OR (status = 'PENDING' AND run_at <= now())
      GROUP BY type, status`,
  );
  for (const j of jobs)
    problems.push(`${j.n} ${j.type} job(s) ${j.status}${j.error ? `: ${j.error}` : ''}`);

  const unindexed = await query<{ n: number }>(
    `SELECT count(*)::int AS n FROM messages m
      WHERE NOT m.placeholder AND length(m.content) > 0
        AND NOT EXISTS (SELECT 1 FROM message_segments s WHERE s.message_id = m.id)`,
  );
  if (unindexed[0].n > 0) problems.push(`${unindexed[0].n} turns never indexed`);
  const models = await query<{ model: string; state: string }>(
    `SELECT model, state FROM embedding_models`,
  );
  const active = models.find((m) => m.state === 'ACTIVE');
  if (models.some((m) => m.state === 'BUILDING'))
    problems.push(`a re-embedding never finished: ${JSON.stringify(models)}`);
  const unembedded = await query<{ n: number }>(
    `SELECT count(*)::int AS n FROM message_segments s
      WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.item_id = s.id AND e.model = $1)`,
    [active?.model],
  );
  if (unembedded[0].n > 0)
    problems.push(`${unembedded[0].n} turn segments have no vector of ${active?.model}`);
  // Counters kept beside the segments: a job that ran twice would have counted twice.
  const stats = await query<{ conversation_id: string; kept: number; real: number }>(
    `SELECT d.conversation_id, d.segments AS kept,
            (SELECT count(*)::int FROM message_segments s WHERE s.conversation_id = d.conversation_id) AS real
       FROM search_doc_stats d`,
  );
  for (const s of stats.filter((x) => x.kept !== x.real))
    problems.push(`conversation ${s.conversation_id} counts ${s.kept} segments for ${s.real}`);
  const overlaps = await query<{ conversation_id: string; n: number }>(
    `SELECT conversation_id, count(*)::int AS n FROM (
       SELECT conversation_id, range_start,
              lag(range_end) OVER (PARTITION BY conversation_id ORDER BY range_start) AS prev_end
         FROM conversation_chunks) x
      WHERE range_start <= prev_end GROUP BY conversation_id`,
  );
  for (const o of overlaps)
    problems.push(`conversation ${o.conversation_id} has ${o.n} overlapping summaries`);
  const stories = await query<{
    id: string;
    status: string;
    total: number;
    indexed: number;
    chunks: number;
  }>(
    `SELECT s.id, s.status, s.total_chunks AS total, s.indexed_chunks AS indexed,
            (SELECT count(*)::int FROM story_chunks c WHERE c.story_id = s.id) AS chunks
       FROM stories s WHERE s.status <> 'READY' OR s.indexed_chunks <> s.total_chunks
          OR s.total_chunks <> (SELECT count(*) FROM story_chunks c WHERE c.story_id = s.id)`,
  );
  for (const s of stories)
    problems.push(
      `story ${s.id} is ${s.status} with ${s.indexed}/${s.total} indexed, ${s.chunks} chunks`,
    );
  const twins = await query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT user_id, legacy_id, normalized FROM memories WHERE status = 'ACTIVE'
        GROUP BY user_id, legacy_id, normalized HAVING count(*) > 1) x`,
  );
  if (twins[0].n > 0) problems.push(`${twins[0].n} memories stored twice`);
  return problems;
}

/**
 * Waits, with the service still running, until its database says the background work is done
 * (what backgroundWorkSettled checks, jobs waiting out a retry's backoff included). /metrics
 * cannot say it after an outage: its gauges read zero while their read fails, and a job that
 * failed while the database was away is not due until its backoff ends. Only on a server, whose
 * database a second connection may read while the service runs.
 */
export async function settledInDatabase(databaseUrl: string, timeoutMs = 300_000): Promise<void> {
  const started = performance.now();
  let problems: string[] = [];
  await withDatabase({ DATABASE_URL: databaseUrl }, async (query) => {
    for (;;) {
      const waiting = await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE status IN ('PENDING', 'RUNNING')`,
      );
      problems =
        waiting[0].n > 0
          ? [`${waiting[0].n} jobs pending or running`]
          : await backgroundWorkSettled(query);
      if (problems.length === 0) return;
      if (performance.now() - started > timeoutMs) {
        throw new Error(
          `background work did not settle within ${timeoutMs} ms: ${problems.join('; ')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  });
}
