import { DataSource } from 'typeorm';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { ScheduledTasksService } from '../../src/jobs/scheduled-tasks.service.js';
import { joinLegacy } from '../support/membership.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * Deleting means deleted: a deleted fact can be restored for FACT_PURGE_AFTER, then the hourly
 * task removes every trace of it. And a member who left still owns, and can delete, their facts.
 */
describe('deleted facts are purged; ex-members delete their own facts', () => {
  let t: TestApp;
  let ds: DataSource;
  let owner: TestUser;
  let author: TestUser;
  let legacyId: string;
  let tick = Date.parse('2026-06-01T00:00:00Z');

  const gql = async <T>(query: string, variables: Record<string, unknown>, as: TestUser) => {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const addFact = async (as: TestUser, content: string, visibility = 'SHARED') =>
    (
      await gql<{ addFact: { id: string } }>(
        `mutation($i: AddFactInput!) { addFact(input: $i) { id } }`,
        { i: { legacyId, content, category: 'PREFERENCE', visibility } },
        as,
      )
    ).addFact.id;
  const purgeTask = async () => {
    tick += 3_600_000;
    expect(
      await t.app.get(ScheduledTasksService).tick({ name: 'facts-purge' }, new Date(tick)),
    ).toBe(true);
    await t.app.get(JobsService).drain();
  };
  /** Every row of every table in which some text, JSON or search column mentions `word`. */
  const traces = async (word: string) => {
    const columns = (await ds.query(
      `SELECT table_name AS t, column_name AS c FROM information_schema.columns
        WHERE table_schema = 'public'
          AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'tsvector', 'ARRAY')`,
    )) as { t: string; c: string }[];
    const found: string[] = [];
    for (const { t: table, c: column } of columns) {
      const [{ n }] = (await ds.query(
        `SELECT count(*)::int AS n FROM "${table}" WHERE "${column}"::text ILIKE $1`,
        [`%${word}%`],
      )) as { n: number }[];
      if (n > 0) found.push(`${table}.${column}`);
    }
    return found;
  };

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      FACT_PURGE_AFTER: '1h',
    });
    ds = t.app.get(DataSource);
    owner = await t.user('purge-owner', { email: 'owner@example.com' });
    author = await t.user('purge-author', { email: 'author@example.com' });
    for (const u of [owner, author]) await t.gql('{ me { id } }', {}, u);
    legacyId = (
      await gql<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Rose" }) { id } }',
        {},
        owner,
      )
    ).createLegacy.id;
    await joinLegacy(t, owner, legacyId, author);
  });
  afterAll(() => t.close());

  it('restores within FACT_PURGE_AFTER, then leaves no trace of the text anywhere', async () => {
    const tulips = await addFact(author, "Rose's favourite flower was tulips.");
    // Supersedes the tulips: their history now quotes it.
    const id = await addFact(author, "Rose's favourite flower was the quillonia.");
    expect(await traces('quillonia')).toEqual(
      expect.arrayContaining(['facts.content', 'fact_history.content', 'fact_history.detail']),
    );
    const del = `mutation($id: ID!) { deleteFact(id: $id) { status } }`;
    const restore = `mutation($id: ID!) { restoreFact(id: $id) { status } }`;
    await gql(del, { id }, author);

    // Within the grace period: the task leaves it, and it can be restored.
    await purgeTask();
    expect(await gql(restore, { id }, author)).toEqual({ restoreFact: { status: 'ACTIVE' } });
    await gql(del, { id }, author);
    await purgeTask();
    expect(await traces('quillonia')).not.toEqual([]);

    // Past it: gone, everywhere, and restoring finds nothing.
    await ds.query(`UPDATE facts SET deleted_at = now() - interval '2 hours' WHERE id = $1`, [id]);
    await purgeTask();
    expect(await traces('quillonia')).toEqual([]);
    expect(await ds.query(`SELECT 1 FROM embeddings WHERE item_id = $1`, [id])).toEqual([]);
    const again = await t.gql(restore, { id }, author);
    expect(again.errors![0].extensions!.code).toBe('NOT_FOUND');

    // The tulips are active again; the family sees neither the supersession nor its undoing.
    const seen = await gql<{ factHistory: { action: string }[] }>(
      'query($id: ID!) { factHistory(id: $id) { action } }',
      { id: tulips },
      owner,
    );
    expect(seen.factHistory.map((h) => h.action)).toEqual(['CREATED']);

    // The task is idempotent: a second run changes nothing.
    const before = await ds.query(`SELECT id, status, updated_at FROM facts ORDER BY id`);
    await purgeTask();
    expect(await ds.query(`SELECT id, status, updated_at FROM facts ORDER BY id`)).toEqual(before);
  });

  it('lets a member who left find and delete their own facts, and nobody else’s', async () => {
    const leaver = await t.user('purge-leaver', { email: 'leaver@example.com' });
    await t.gql('{ me { id } }', {}, leaver);
    await joinLegacy(t, owner, legacyId, leaver);
    const mine = await addFact(leaver, 'Rose sang alto in the church choir.');
    const theirs = await addFact(author, 'Rose kept hens in the back garden.');
    await gql('mutation($l: ID!) { leaveLegacy(legacyId: $l) }', { l: legacyId }, leaver);

    const left = await gql<{ leftBehindFacts: { nodes: { id: string; content: string }[] } }>(
      '{ leftBehindFacts(first: 10) { nodes { id content } } }',
      {},
      leaver,
    );
    expect(left.leftBehindFacts.nodes).toEqual([
      { id: mine, content: 'Rose sang alto in the church choir.' },
    ]);
    // Still a member: nothing is left behind for the author.
    const none = await gql<{ leftBehindFacts: { nodes: unknown[] } }>(
      '{ leftBehindFacts(first: 10) { nodes { id } } }',
      {},
      author,
    );
    expect(none.leftBehindFacts.nodes).toEqual([]);

    const refused = await t.gql(
      'mutation($id: ID!) { deleteFact(id: $id) { status } }',
      { id: theirs },
      leaver,
    );
    expect(refused.errors![0].extensions!.code).toBe('NOT_FOUND');
    expect(
      await gql('mutation($id: ID!) { deleteFact(id: $id) { status } }', { id: mine }, leaver),
    ).toEqual({ deleteFact: { status: 'DELETED' } });
    const after = await gql<{ leftBehindFacts: { nodes: unknown[] } }>(
      '{ leftBehindFacts(first: 10) { nodes { id } } }',
      {},
      leaver,
    );
    expect(after.leftBehindFacts.nodes).toEqual([]);
  });
});
