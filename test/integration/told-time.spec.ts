import { DataSource } from 'typeorm';
import type { UserEntity } from '../../src/identity/user.entity.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { HybridSearchService } from '../../src/search/hybrid-search.service.js';
import { SegmentIndexerService } from '../../src/search/segment-indexer.service.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * The period a turn tells of ("last Friday", said on the Monday after) is stored with its
 * segments and found by a question about that period; segments stored before it existed are
 * read by an idempotent background job.
 */
describe('Told periods', () => {
  let t: TestApp;
  let ds: DataSource;
  let alice: TestUser;
  let aliceUser: UserEntity;
  let legacyId: string;

  const told = (): Promise<{ content: string; from: Date | null; to: Date | null }[]> =>
    ds.query(
      `SELECT content, told_from AS "from", told_to AS "to" FROM message_segments
        WHERE legacy_id = $1 ORDER BY turn_index`,
      [legacyId],
    );

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    ds = t.app.get(DataSource);
    alice = await t.user('told-alice');
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandma Rose" }) { id } }',
      {},
      alice,
    );
    legacyId = created.data!.createLegacy.id;
    const imported = await t.gql(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }`,
      {
        input: {
          legacyId,
          title: 'May',
          messages: [
            // Monday 13 May 2024: Friday the 10th is told three days later.
            {
              role: 'USER',
              content: 'She won the pie contest last Friday!',
              occurredAt: '2024-05-13T18:00:00Z',
            },
            {
              role: 'ASSISTANT',
              content: 'What kind of pie was it?',
              occurredAt: '2024-05-13T18:01:00Z',
            },
            {
              role: 'USER',
              content: 'Rhubarb, her mother’s recipe.',
              occurredAt: '2024-05-13T18:02:00Z',
            },
            {
              role: 'USER',
              content: 'We planted tulips in the spring.',
              occurredAt: '2024-04-02T09:00:00Z',
            },
          ],
        },
      },
      alice,
    );
    expect(imported.errors).toBeUndefined();
    await t.app.get(JobsService).drain({ timeoutMs: 60_000 });
    [aliceUser] = await ds.query(`SELECT id, timezone FROM users WHERE subject = 'told-alice'`);
  });

  afterAll(() => t.close());

  it('stores the period a turn tells of, read against when it was said', async () => {
    const rows = await told();
    const pie = rows.find((r) => r.content.startsWith('She won'))!;
    expect(pie.from?.toISOString()).toBe('2024-05-10T00:00:00.000Z');
    expect(pie.to?.toISOString()).toBe('2024-05-11T00:00:00.000Z');
    expect(rows.filter((r) => r.from !== null)).toHaveLength(1);
  });

  it('finds the turn for a question about the period it tells of, said days later', async () => {
    const outcome = await t.app.get(HybridSearchService).search({
      user: aliceUser,
      legacyId,
      conversationId: null,
      query: 'What happened on 10 May 2024?',
      clock: new Date('2024-06-01T12:00:00Z'),
    });
    expect(outcome.hits.time).toBeGreaterThan(0);
    const pie = outcome.ranked.find((r) => r.text.startsWith('She won'))!;
    expect(pie.components.time).toBe(1);
    expect(pie.paths.time).toBeDefined();
    const tulips = outcome.ranked.find((r) => r.text.startsWith('We planted'));
    expect(tulips?.components.time ?? 0).toBe(0);
  });

  it('reads segments stored before told periods existed, once', async () => {
    const before = await told();
    await ds.query(
      `UPDATE message_segments SET told_from = NULL, told_to = NULL, told_checked = false
        WHERE legacy_id = $1`,
      [legacyId],
    );
    const indexer = t.app.get(SegmentIndexerService);
    expect(await indexer.readToldPeriods()).toBe(before.length);
    expect(await told()).toEqual(before);
    // A second run finds nothing to read and changes nothing.
    expect(await indexer.readToldPeriods()).toBe(0);
    expect(await told()).toEqual(before);
  });
});
