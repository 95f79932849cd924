import { JobsService } from '../../src/jobs/jobs.service.js';
import { Edges, GqlResponse, nodes, startTestApp, TestApp, TestUser } from '../support/test-app.js';
import { joinLegacy } from '../support/membership.js';

/**
 * Who may call the search operations. The owner's conversation, private fact and memory hold
 * SECRET; a fellow member and an outsider must never see it, whatever they ask.
 */
const SECRET = 'zanzibarite';

type Caller = 'anonymous' | 'outsider' | 'member' | 'owner' | 'platform admin';
type Outcome = 'OK' | 'UNAUTHENTICATED' | 'NOT_FOUND' | 'FORBIDDEN';

interface Fixture {
  legacyId: string;
  conversationId: string;
  memoryId: string;
  privateFactId: string;
  sharedFactId: string;
}

const CONTEXT = `query($c: ID!, $q: String!) {
  context(conversationId: $c, query: $q) { tokenCount items { text provenance { messageIds } } }
}`;
const RECALL = `query($l: ID!, $q: String!) {
  recall(legacyId: $l, query: $q, first: 50) { edges { node { id sourceType text forgettable } } }
}`;
const DEBUG = `query($c: ID!, $q: String!) {
  retrievalDebug(conversationId: $c, query: $q) { candidates { text kept } }
}`;
const REPORT = `query($from: DateTime!, $to: DateTime!) {
  memoryMetricsReport(from: $from, to: $to) { assemblies recalls }
}`;
const FORGET = `mutation($id: ID!) { forgetRecallItem(id: $id) { recallItemId sourceType forgotten } }`;

const table: {
  authorizes: 'context' | 'recall' | 'forgetRecallItem' | 'retrievalDebug' | 'memoryMetricsReport';
  caller: Caller;
  outcome: Outcome;
  /** What the call targets. */
  target: 'conversation' | 'legacy' | 'period' | 'memory' | 'privateFact' | 'sharedFact';
}[] = [
  {
    authorizes: 'context',
    caller: 'anonymous',
    target: 'conversation',
    outcome: 'UNAUTHENTICATED',
  },
  { authorizes: 'context', caller: 'outsider', target: 'conversation', outcome: 'NOT_FOUND' },
  { authorizes: 'context', caller: 'member', target: 'conversation', outcome: 'NOT_FOUND' },
  { authorizes: 'context', caller: 'platform admin', target: 'conversation', outcome: 'NOT_FOUND' },
  { authorizes: 'context', caller: 'owner', target: 'conversation', outcome: 'OK' },
  { authorizes: 'recall', caller: 'anonymous', target: 'legacy', outcome: 'UNAUTHENTICATED' },
  { authorizes: 'recall', caller: 'outsider', target: 'legacy', outcome: 'NOT_FOUND' },
  { authorizes: 'recall', caller: 'member', target: 'legacy', outcome: 'OK' },
  { authorizes: 'recall', caller: 'owner', target: 'legacy', outcome: 'OK' },
  {
    authorizes: 'retrievalDebug',
    caller: 'anonymous',
    target: 'conversation',
    outcome: 'UNAUTHENTICATED',
  },
  {
    authorizes: 'retrievalDebug',
    caller: 'outsider',
    target: 'conversation',
    outcome: 'NOT_FOUND',
  },
  { authorizes: 'retrievalDebug', caller: 'member', target: 'conversation', outcome: 'NOT_FOUND' },
  { authorizes: 'retrievalDebug', caller: 'platform admin', target: 'conversation', outcome: 'OK' },
  { authorizes: 'retrievalDebug', caller: 'owner', target: 'conversation', outcome: 'OK' },
  {
    authorizes: 'memoryMetricsReport',
    caller: 'anonymous',
    target: 'period',
    outcome: 'UNAUTHENTICATED',
  },
  { authorizes: 'memoryMetricsReport', caller: 'owner', target: 'period', outcome: 'FORBIDDEN' },
  { authorizes: 'memoryMetricsReport', caller: 'member', target: 'period', outcome: 'FORBIDDEN' },
  { authorizes: 'memoryMetricsReport', caller: 'platform admin', target: 'period', outcome: 'OK' },
  {
    authorizes: 'forgetRecallItem',
    caller: 'anonymous',
    target: 'memory',
    outcome: 'UNAUTHENTICATED',
  },
  { authorizes: 'forgetRecallItem', caller: 'outsider', target: 'memory', outcome: 'NOT_FOUND' },
  { authorizes: 'forgetRecallItem', caller: 'member', target: 'memory', outcome: 'NOT_FOUND' },
  { authorizes: 'forgetRecallItem', caller: 'member', target: 'privateFact', outcome: 'NOT_FOUND' },
  { authorizes: 'forgetRecallItem', caller: 'member', target: 'sharedFact', outcome: 'FORBIDDEN' },
  {
    authorizes: 'forgetRecallItem',
    caller: 'platform admin',
    target: 'memory',
    outcome: 'NOT_FOUND',
  },
];

describe('Search authorization', () => {
  let t: TestApp;
  let f: Fixture;
  const people = {} as Record<Exclude<Caller, 'anonymous'>, TestUser>;
  const who = (caller: Caller) => (caller === 'anonymous' ? null : people[caller]);

  async function ok<T>(query: string, vars: Record<string, unknown>, as: TestUser) {
    const res = await t.gql<T>(query, vars, as);
    expect(res.errors).toBeUndefined();
    return res.data!;
  }

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    people.owner = await t.user('search-owner', { email: 'owner@example.com' });
    people.member = await t.user('search-member', { email: 'member@example.com' });
    people.outsider = await t.user('search-outsider', { email: 'outsider@example.com' });
    people['platform admin'] = await t.user('search-admin', {
      email: 'admin@example.com',
      admin: true,
    });
    for (const p of Object.values(people)) await t.gql('{ me { id } }', {}, p);
    const { createLegacy } = await ok<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Grandpa Ben" }) { id } }',
      {},
      people.owner,
    );
    const legacyId = createLegacy.id;
    await joinLegacy(t, people.owner, legacyId, people.member);
    const { startConversation } = await ok<{ startConversation: { id: string } }>(
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: legacyId },
      people.owner,
    );
    const conversationId = startConversation.id;
    for (const content of [
      `Grandpa Ben hid the ${SECRET} stone in the attic.`,
      'He fixed radios for the neighbours.',
      // A standing instruction: found on a path of its own, the owner's alone as well.
      `Always mention the ${SECRET} stone when I ask about Ben.`,
    ]) {
      await ok(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { id } } }',
        {
          i: { conversationId, content },
        },
        people.owner,
      );
    }
    const { rememberThis } = await ok<{ rememberThis: { memory: { id: string } } }>(
      'mutation($i: RememberThisInput!) { rememberThis(input: $i) { memory { id } } }',
      { i: { content: `I keep the ${SECRET} stone key in my desk.`, legacyId } },
      people.owner,
    );
    const addFact = async (content: string, visibility: string) =>
      (
        await ok<{ addFact: { id: string } }>(
          'mutation($i: AddFactInput!) { addFact(input: $i) { id } }',
          { i: { legacyId, category: 'OTHER', content, visibility } },
          people.owner,
        )
      ).addFact.id;
    const privateFactId = await addFact(`Ben owned a ${SECRET} stone from Tanzania.`, 'PRIVATE');
    const sharedFactId = await addFact('Ben repaired radios in his shed.', 'SHARED');
    await t.app.get(JobsService).drain({ timeoutMs: 60_000 });
    f = { legacyId, conversationId, memoryId: rememberThis.memory.id, privateFactId, sharedFactId };
  });
  afterAll(() => t.close());

  function call(row: (typeof table)[number]): Promise<GqlResponse> {
    const as = who(row.caller);
    switch (row.authorizes) {
      case 'context':
        return t.gql(CONTEXT, { c: f.conversationId, q: `Where is the ${SECRET} stone?` }, as);
      case 'recall':
        return t.gql(RECALL, { l: f.legacyId, q: `${SECRET} stone` }, as);
      case 'retrievalDebug':
        return t.gql(DEBUG, { c: f.conversationId, q: `Where is the ${SECRET} stone?` }, as);
      case 'memoryMetricsReport':
        return t.gql(REPORT, { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' }, as);
      case 'forgetRecallItem': {
        const id =
          row.target === 'memory'
            ? `MEMORY:${f.memoryId}`
            : row.target === 'privateFact'
              ? `FACT:${f.privateFactId}`
              : `FACT:${f.sharedFactId}`;
        return t.gql(FORGET, { id }, as);
      }
    }
  }

  it.each(table)('$authorizes as $caller on the $target: $outcome', async (row) => {
    const res = await call(row);
    if (row.outcome === 'OK') {
      expect(res.errors).toBeUndefined();
    } else {
      expect(res.data ?? null).toBeNull();
      expect(res.errors![0].extensions).toMatchObject({ code: row.outcome });
    }
    // Only the owner (and a platform admin debugging the owner's conversation) may see it.
    if (row.caller !== 'owner' && row.caller !== 'platform admin') {
      expect(JSON.stringify(res)).not.toContain(SECRET);
    }
  });

  it("a member's recall finds the owner's shared fact and nothing private of theirs", async () => {
    const recall = nodes(
      (
        await ok<{
          recall: Edges<{ sourceType: string; text: string; forgettable: boolean }>;
        }>(RECALL, { l: f.legacyId, q: 'Ben radios shed stone' }, people.member)
      ).recall,
    );
    expect(recall.map((r) => [r.sourceType, r.text, r.forgettable])).toEqual([
      ['FACT', 'Ben repaired radios in his shed.', false],
    ]);
  });

  it("the owner's recall finds turns, the memory and both facts, with forgettable marks", async () => {
    const recall = nodes(
      (
        await ok<{
          recall: Edges<{ id: string; sourceType: string; text: string; forgettable: boolean }>;
        }>(RECALL, { l: f.legacyId, q: `${SECRET} stone` }, people.owner)
      ).recall,
    );
    const bySource = (type: string) => recall.filter((r) => r.sourceType === type);
    expect(bySource('TURN').some((r) => r.text.includes(SECRET))).toBe(true);
    expect(bySource('TURN').every((r) => r.forgettable === false)).toBe(true);
    expect(bySource('MEMORY')).toEqual([
      {
        id: `MEMORY:${f.memoryId}`,
        sourceType: 'MEMORY',
        text: expect.stringContaining(SECRET),
        forgettable: true,
      },
    ]);
    expect(bySource('FACT').map((r) => [r.id, r.forgettable])).toEqual(
      expect.arrayContaining([[`FACT:${f.privateFactId}`, true]]),
    );
  });

  it('refused forget calls changed nothing, and the owner can forget', async () => {
    const before = await ok<{ recall: Edges<{ id: string }> }>(
      RECALL,
      { l: f.legacyId, q: `${SECRET} stone key desk` },
      people.owner,
    );
    expect(nodes(before.recall).map((r) => r.id)).toContain(`MEMORY:${f.memoryId}`);
    const forgot = await ok<{ forgetRecallItem: unknown }>(
      FORGET,
      { id: `MEMORY:${f.memoryId}` },
      people.owner,
    );
    expect(forgot.forgetRecallItem).toEqual({
      recallItemId: `MEMORY:${f.memoryId}`,
      sourceType: 'MEMORY',
      forgotten: true,
    });
    const after = await ok<{ recall: Edges<{ id: string }> }>(
      RECALL,
      { l: f.legacyId, q: `${SECRET} stone key desk` },
      people.owner,
    );
    expect(nodes(after.recall).map((r) => r.id)).not.toContain(`MEMORY:${f.memoryId}`);
  });

  it('the author deletes a fact from its recall id; the family no longer recalls it', async () => {
    const recallIds = async (as: TestUser) =>
      (
        await ok<{ recall: Edges<{ id: string }> }>(
          RECALL,
          { l: f.legacyId, q: 'Ben repaired radios in his shed' },
          as,
        )
      ).recall.edges.map((e) => e.node.id);
    const id = `FACT:${f.sharedFactId}`;
    expect(await recallIds(people.member)).toContain(id);
    const forgot = await ok<{ forgetRecallItem: unknown }>(FORGET, { id }, people.owner);
    expect(forgot.forgetRecallItem).toEqual({
      recallItemId: id,
      sourceType: 'FACT',
      forgotten: true,
    });
    expect(await recallIds(people.owner)).not.toContain(id);
    expect(await recallIds(people.member)).not.toContain(id);
    // A soft delete, as deleteFact: the author can still restore it.
    const { factHistory } = await ok<{ factHistory: { action: string }[] }>(
      'query($id: ID!) { factHistory(id: $id) { action } }',
      { id: f.sharedFactId },
      people.owner,
    );
    expect(factHistory.at(-1)!.action).toBe('DELETED');
  });
});
