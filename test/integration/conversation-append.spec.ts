import pg from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import { ConversationsService } from '../../src/conversations/conversations.service.js';
import { MessageRole } from '../../src/conversations/message-role.enum.js';
import { joinLegacy } from '../support/membership.js';
import { ON_SERVER } from '../support/test-database.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * What one sendMessage asks of the database: the conversation with the sender's part in it and
 * their membership in one read; the turn counter, the check that its writer still takes part and
 * the turn in one statement; on a server, the notification inside the turn's transaction. And
 * that the one statement still refuses a turn whose writer left while it waited.
 */
describe('appending a turn', () => {
  let t: TestApp;
  let ds: DataSource;
  let ana: TestUser;
  let ben: TestUser;
  let benId: string;
  let legacyId: string;

  const ok = async <T>(query: string, variables: Record<string, unknown>, who: TestUser) => {
    const res = await t.gql<T>(query, variables, who);
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const start = async () =>
    (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!, $p: [ID!]) { startConversation(input: { legacyId: $l, participantIds: $p }) { id } }',
        { l: legacyId, p: [benId] },
        ana,
      )
    ).startConversation.id;
  const send = (who: TestUser, conversationId: string, content: string) =>
    t.gql<{ sendMessage: { message: { turnIndex: number } } }>(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { message { turnIndex } } }',
      { i: { conversationId, content } },
      who,
    );

  /** The statements the service runs while `work` does, in order. */
  async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
    const runner = ds.createQueryRunner();
    const proto = Object.getPrototypeOf(runner) as QueryRunner;
    await runner.release();
    const original = proto.query;
    const seen: string[] = [];
    proto.query = function (this: QueryRunner, ...args: Parameters<QueryRunner['query']>) {
      seen.push(args[0].replace(/\s+/g, ' ').trim());
      return original.apply(this, args);
    } as QueryRunner['query'];
    try {
      await work();
    } finally {
      proto.query = original;
    }
    return seen;
  }

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    ds = t.app.get(DataSource);
    ana = await t.user('append-ana', { email: 'ana@append.example.com' });
    ben = await t.user('append-ben', { email: 'ben@append.example.com' });
    benId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, ben)).me.id;
    legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Grandma Ida" }) { id } }',
        {},
        ana,
      )
    ).createLegacy.id;
    await joinLegacy(t, ana, legacyId, ben);
  });
  afterAll(() => t?.close());

  it('reads the conversation once and writes the turn with its index in one statement', async () => {
    const conversationId = await start();
    expect((await send(ben, conversationId, 'The first turn.')).errors).toBeUndefined();
    const statements = await statementsOf(async () => {
      const res = await send(ben, conversationId, 'She kept a jar of buttons on the sill.');
      expect(res.errors).toBeUndefined();
      expect(res.data!.sendMessage.message.turnIndex).toBe(1);
    });
    const begin = statements.indexOf('START TRANSACTION');
    const commit = statements.indexOf('COMMIT');
    expect(begin).toBeGreaterThan(0);
    const before = statements.slice(0, begin);
    const inside = statements.slice(begin + 1, commit);
    // The conversation, the sender's part in it and their membership: one read.
    const reads = before.filter((s) =>
      /conversation_participants|legacy_members|conversations/.test(s),
    );
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatch(/conversation_participants/);
    expect(reads[0]).toMatch(/legacy_members/);
    // The counter, the participation check and the turn: one statement.
    const turn = inside.filter((s) =>
      /conversations|conversation_participants|INTO messages/.test(s),
    );
    expect(turn).toHaveLength(1);
    expect(turn[0]).toMatch(/UPDATE conversations .* INSERT INTO messages/);
    if (ON_SERVER) {
      // The notification is sent inside the transaction (the server delivers it at commit).
      expect(inside.some((s) => s.includes('pg_notify'))).toBe(true);
      expect(statements.slice(commit + 1).some((s) => s.includes('pg_notify'))).toBe(false);
    }
    expect(
      await ds.query(
        `SELECT turn_index AS "turnIndex", content FROM messages
          WHERE conversation_id = $1 ORDER BY turn_index`,
        [conversationId],
      ),
    ).toEqual([
      { turnIndex: 0, content: 'The first turn.' },
      { turnIndex: 1, content: 'She kept a jar of buttons on the sill.' },
    ]);
  });

  it('refuses the turn of a participant who left, counting nothing; the agent still answers', async () => {
    const conversationId = await start();
    expect((await send(ben, conversationId, 'Before I go.')).errors).toBeUndefined();
    await ok(
      'mutation($id: ID!) { leaveConversation(conversationId: $id) { id } }',
      { id: conversationId },
      ben,
    );
    const service = t.app.get(ConversationsService);
    const view = (await service.findByIds([conversationId]))[0];
    await expect(
      service.append(view, { role: MessageRole.USER, authorId: benId, content: 'After.' }),
    ).rejects.toMatchObject({ publicCode: 'NOT_FOUND' });
    // An assistant turn is not a participant's own: it is stored at the next index.
    const { message } = await service.append(view, {
      role: MessageRole.ASSISTANT,
      authorId: benId,
      content: 'Goodbye, Ben.',
    });
    expect(message.turnIndex).toBe(1);
    const [row] = await ds.query(
      `SELECT next_turn_index AS next FROM conversations WHERE id = $1`,
      [conversationId],
    );
    expect(row.next).toBe(2);
  });

  (ON_SERVER ? it : it.skip)(
    'refuses a turn whose writer left while it waited for the conversation',
    async () => {
      const conversationId = await start();
      expect((await send(ben, conversationId, 'Still here.')).errors).toBeUndefined();
      const service = t.app.get(ConversationsService);
      const [conversation] = await service.findByIds([conversationId]);
      // Another connection leaves the conversation as leaveConversation does: the conversation's
      // lock first, then the participation, committed while the send waits on that lock.
      const other = new pg.Client({ connectionString: t.databaseEnv.DATABASE_URL });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT next_turn_index FROM conversations WHERE id = $1 FOR UPDATE', [
          conversationId,
        ]);
        await other.query(
          `UPDATE conversation_participants SET left_at = now(), left_at_turn = 1
            WHERE conversation_id = $1 AND user_id = $2`,
          [conversationId, benId],
        );
        const sent = service
          .append(conversation, { role: MessageRole.USER, authorId: benId, content: 'Too late.' })
          .then(
            () => 'stored',
            (err: { publicCode?: string }) => err.publicCode,
          );
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query('COMMIT');
        expect(await sent).toBe('NOT_FOUND');
      } finally {
        await other.end();
      }
      const rows = await ds.query(
        `SELECT content FROM messages WHERE conversation_id = $1 ORDER BY turn_index`,
        [conversationId],
      );
      expect(rows).toEqual([{ content: 'Still here.' }]);
    },
  );
});
