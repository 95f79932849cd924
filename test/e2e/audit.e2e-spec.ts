import { DataSource } from 'typeorm';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

const DEBUG = `query($c: ID!, $q: String!) {
  retrievalDebug(conversationId: $c, query: $q) { candidates { kept } } }`;
const FAILED = '{ failedJobs(first: 10) { nodes { id } } }';
const RETRY = 'mutation($id: ID!) { retryJob(id: $id) { status } }';
const AUDIT = `query($first: Int, $after: String) {
  auditLog(first: $first, after: $after) {
    nodes { id actorId operation targetUserId targetLegacyId targetConversationId details createdAt }
    pageInfo { hasNextPage endCursor } } }`;

interface Entry {
  id: string;
  actorId: string;
  operation: string;
  targetUserId: string | null;
  targetLegacyId: string | null;
  targetConversationId: string | null;
  details: Record<string, string[]>;
  createdAt: string;
}

/**
 * A platform admin's use of another user's data (retrievalDebug, failedJobs, retryJob) leaves
 * an audit row, ids only, that auditLog lists to platform admins, newest first.
 */
describe('audit log', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let ownerId: string;
  let adminId: string;
  let legacyId: string;
  let conversationId: string;
  const SECRET = 'the-owner-private-phrase-zanzibar';

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    owner = await t.user('audit-owner', { email: 'audit-owner@example.com' });
    admin = await t.user('audit-admin', { email: 'audit-admin@example.com', admin: true });
    ownerId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, owner)).me.id;
    adminId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, admin)).me.id;
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Audited family" }) { id } }',
        {},
        owner,
      )
    ).createLegacy.id;
    conversationId = (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacyId },
        owner,
      )
    ).startConversation.id;
    await ok(
      'mutation($c: ID!, $m: String!) { sendMessage(input: { conversationId: $c, content: $m }) { message { id } } }',
      { c: conversationId, m: `Grandma kept ${SECRET} in the attic.` },
      owner,
    );
  });

  afterAll(() => t.close());

  async function ok<T>(query: string, variables: Record<string, unknown>, as: TestUser) {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data as T;
  }

  const entries = async (first = 50) =>
    (await ok<{ auditLog: { nodes: Entry[] } }>(AUDIT, { first }, admin)).auditLog.nodes;

  it("records an admin's retrievalDebug on another user's conversation, ids only", async () => {
    const before = await entries();
    await ok(DEBUG, { c: conversationId, q: `where is ${SECRET}` }, admin);
    const after = await entries();
    expect(after).toHaveLength(before.length + 1);
    expect(after[0]).toMatchObject({
      actorId: adminId,
      operation: 'RETRIEVAL_DEBUG',
      targetUserId: ownerId,
      targetLegacyId: legacyId,
      targetConversationId: conversationId,
    });
    expect(Date.now() - Date.parse(after[0].createdAt)).toBeLessThan(60_000);
    // Who, when, what: never the query or the conversation's text.
    expect(JSON.stringify(after)).not.toContain(SECRET);
    const [row] = await t.app
      .get(DataSource)
      .query(`SELECT * FROM audit_log WHERE id = $1`, [after[0].id]);
    expect(JSON.stringify(row)).not.toContain(SECRET);
  });

  it('does not record the owner debugging their own conversation, nor an admin their own', async () => {
    const before = await entries();
    await ok(DEBUG, { c: conversationId, q: 'attic' }, owner);
    const own = (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        {
          l: (
            await ok<{ createLegacy: { id: string } }>(
              'mutation { createLegacy(input: { name: "Admin family" }) { id } }',
              {},
              admin,
            )
          ).createLegacy.id,
        },
        admin,
      )
    ).startConversation.id;
    await ok(DEBUG, { c: own, q: 'anything' }, admin);
    expect(await entries()).toEqual(before);
  });

  it('records failedJobs and retryJob with the ids the jobs name', async () => {
    const ds = t.app.get(DataSource);
    const [job] = await ds.query(
      `INSERT INTO jobs (type, key, payload, status, attempts, last_error)
       VALUES ('test:audited', 'k1', $1::jsonb, 'FAILED', 3, 'boom') RETURNING id`,
      [JSON.stringify({ conversationId, note: 'x' })],
    );
    const listed = await ok<{ failedJobs: { nodes: { id: string }[] } }>(FAILED, {}, admin);
    expect(listed.failedJobs.nodes.map((n) => n.id)).toContain(job.id);
    let [latest] = await entries(1);
    expect(latest).toMatchObject({ actorId: adminId, operation: 'FAILED_JOBS' });
    expect(latest.details.jobIds).toContain(job.id);
    expect(latest.details.conversationIds).toEqual([conversationId]);

    await ok(RETRY, { id: job.id }, admin);
    [latest] = await entries(1);
    expect(latest).toMatchObject({
      operation: 'RETRY_JOB',
      details: { jobIds: [job.id], conversationIds: [conversationId] },
    });
  });

  it('pages newest first with cursors; refuses a bad cursor as BAD_USER_INPUT', async () => {
    const all = await entries();
    expect(all.length).toBeGreaterThanOrEqual(3);
    const sorted = [...all].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    expect(all.map((e) => e.id)).toEqual(sorted.map((e) => e.id));
    const first = await ok<{ auditLog: { nodes: Entry[]; pageInfo: { endCursor: string } } }>(
      AUDIT,
      { first: 1 },
      admin,
    );
    const second = await ok<{ auditLog: { nodes: Entry[] } }>(
      AUDIT,
      { first: 1, after: first.auditLog.pageInfo.endCursor },
      admin,
    );
    expect([first.auditLog.nodes[0].id, second.auditLog.nodes[0].id]).toEqual([
      all[0].id,
      all[1].id,
    ]);
    const bad = Buffer.from(JSON.stringify(['not a date', 'x'])).toString('base64url');
    const refused = await t.gql(AUDIT, { first: 1, after: bad }, admin);
    expect(refused.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('is for platform admins only', async () => {
    const member = await t.gql(AUDIT, {}, owner);
    expect(member.errors![0].extensions).toMatchObject({ code: 'FORBIDDEN' });
    expect(member.data).toBeNull();
    const anonymous = await t.gql(AUDIT, {}, null);
    expect(anonymous.errors![0].extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('fails the operation when its audit row cannot be written', async () => {
    const ds = t.app.get(DataSource);
    await ds.query(`ALTER TABLE audit_log RENAME TO audit_log_away`);
    try {
      const res = await t.gql(DEBUG, { c: conversationId, q: 'attic' }, admin);
      expect(res.errors![0].extensions).toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
      expect(res.data).toBeNull();
      const jobs = await t.gql(FAILED, {}, admin);
      expect(jobs.data).toBeNull();
    } finally {
      await ds.query(`ALTER TABLE audit_log_away RENAME TO audit_log`);
    }
  });
});
