import { createClient, type Client } from 'graphql-ws';
import { DataSource } from 'typeorm';
import WebSocket from 'ws';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { joinLegacy } from '../support/membership.js';
import { SignJWT } from 'jose';
import {
  GqlResponse,
  signToken,
  startTestApp,
  subscribe,
  TEST_JWT_SECRET,
  TestApp,
  TestUser,
} from '../support/test-app.js';

const MESSAGE_ADDED = 'subscription($id: ID!) { messageAdded(conversationId: $id) { content } }';
const REPLY_DELTA =
  'subscription($id: ID!) { assistantReplyDelta(conversationId: $id) { conversationId done } }';
const FACT_CHANGED = 'subscription($legacyId: ID!) { factChanged(legacyId: $legacyId) { change } }';
const MEMORY_CHANGED = 'subscription { memoryChanged { action } }';
const SEND = `mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`;

type Sub = ReturnType<typeof subscribe>;

/** Waits until the subscription has ended, and returns its last error. */
async function endedWith(sub: Sub, timeoutMs = 4000) {
  const started = Date.now();
  while (!sub.done && Date.now() - started < timeoutMs) await new Promise((r) => setTimeout(r, 25));
  expect(sub.done).toBe(true);
  // The error arrives as a result (next) and the subscription then completes.
  expect(sub.error).toBeNull();
  const last = sub.events.at(-1) as GqlResponse | undefined;
  expect(last?.data ?? null).toBeNull();
  expect(last?.errors).toHaveLength(1);
  expect(JSON.stringify(last)).not.toMatch(/stack|at .*\.js/);
  return { error: last!.errors![0], elapsedMs: Date.now() - started };
}

describe('sessions: tokens and subscriptions that end', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let memberId: string;

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JWT_CLOCK_TOLERANCE_S: '0' });
    owner = await t.user('sessions-owner', { email: 'sessions-owner@example.com' });
    member = await t.user('sessions-member', { email: 'sessions-member@example.com' });
    memberId = (await ok<{ me: { id: string } }>('{ me { id } }', {}, member)).me.id;
  });

  afterAll(() => t.close());

  async function ok<T>(query: string, variables: Record<string, unknown>, as: TestUser | string) {
    const res = await t.gql<T>(query, variables, as);
    expect(res.errors).toBeUndefined();
    return res.data as T;
  }

  async function family(name: string): Promise<string> {
    const legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation($name: String!) { createLegacy(input: { name: $name }) { id } }',
        { name },
        owner,
      )
    ).createLegacy.id;
    await joinLegacy(t, owner, legacyId, member);
    return legacyId;
  }

  async function conversation(legacyId: string, as: TestUser | string): Promise<string> {
    return (
      await ok<{ startConversation: { id: string } }>(
        'mutation($legacyId: ID!) { startConversation(input: { legacyId: $legacyId }) { id } }',
        { legacyId },
        as,
      )
    ).startConversation.id;
  }

  it('rejects a token without exp over HTTP and WebSocket', async () => {
    const noExp = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('sessions-no-exp')
      .setIssuedAt()
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const http = await t.gql('{ me { id } }', {}, noExp);
    expect(http.errors![0].extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(http.errors![0].message).toMatch(/exp/);

    const sub = subscribe(t.ws(noExp), MEMORY_CHANGED);
    const events = await sub.waitFor(1);
    const errors = events[0]?.errors ?? (sub.error as GqlResponse['errors']);
    expect(errors![0].extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    sub.unsubscribe();
  });

  it('rejects an HS256 token whose lifetime is longer than JWT_MAX_AGE', async () => {
    const long = await signToken('sessions-long', {}, { expiresIn: '25h' });
    const res = await t.gql('{ me { id } }', {}, long);
    expect(res.errors![0].extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(res.errors![0].message).toMatch(/JWT_MAX_AGE/);
  });

  it('does not let an unverified email claim an invitation', async () => {
    const { createLegacy } = await ok<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Invitation family" }) { id } }',
      {},
      owner,
    );
    await ok(
      `mutation($input: AddLegacyMemberInput!) { addLegacyMember(input: $input) { invitation { email } } }`,
      { input: { legacyId: createLegacy.id, email: 'sessions-eve@example.com', role: 'MEMBER' } },
      owner,
    );
    for (const [sub, verified] of [
      ['sessions-eve-missing', undefined],
      ['sessions-eve-string', 'false'],
      ['sessions-eve-true-string', 'true'],
    ] as const) {
      const token = await signToken(sub, {
        email: 'sessions-eve@example.com',
        ...(verified === undefined ? {} : { email_verified: verified }),
      });
      const me = await ok<{ me: { email: string | null } }>('{ me { email } }', {}, token);
      expect(me.me.email).toBeNull();
      const invited = await ok<{ myInvitations: unknown[] }>('{ myInvitations { id } }', {}, token);
      expect(invited.myInvitations).toEqual([]);
      const view = await t.gql(
        'query($id: ID!) { legacy(id: $id) { id } }',
        { id: createLegacy.id },
        token,
      );
      expect(view.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('claims an invitation only while the current token verifies the email', async () => {
    const { createLegacy } = await ok<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Frank family" }) { id } }',
      {},
      owner,
    );
    const email = 'sessions-frank@example.com';
    const as = (claims: Record<string, unknown>) => signToken('sessions-frank', claims);
    const verified = await as({ email, email_verified: true });
    expect((await ok<{ me: { email: string } }>('{ me { email } }', {}, verified)).me.email).toBe(
      email,
    );
    const { addLegacyMember } = await ok<{ addLegacyMember: { invitation: { id: string } } }>(
      `mutation($input: AddLegacyMemberInput!) { addLegacyMember(input: $input) { invitation { id } } }`,
      { input: { legacyId: createLegacy.id, email, role: 'MEMBER' } },
      owner,
    );
    const invitationId = addLegacyMember.invitation.id;
    // Later tokens for the same subject: the provider no longer vouches for the address.
    for (const token of [
      await as({ email, email_verified: false }),
      await as({ email }),
      await as({}),
    ]) {
      const me = await ok<{ me: { email: string | null } }>('{ me { email } }', {}, token);
      expect(me.me.email).toBeNull();
      const mine = await ok<{ myInvitations: unknown[] }>('{ myInvitations { id } }', {}, token);
      expect(mine.myInvitations).toEqual([]);
      for (const mutation of ['acceptInvitation(id: $id) { id }', 'declineInvitation(id: $id)']) {
        const res = await t.gql(`mutation($id: ID!) { ${mutation} }`, { id: invitationId }, token);
        expect(res.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
      }
    }
    // Verified again: the invitation is still there to accept.
    const again = await as({ email, email_verified: true });
    await ok(
      'mutation($id: ID!) { acceptInvitation(id: $id) { id } }',
      { id: invitationId },
      again,
    );
  });

  it('takes a WebSocket token only as "Bearer <token>", as over HTTP', async () => {
    const bare = await signToken('sessions-bare');
    const res = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: bare },
      body: JSON.stringify({ query: '{ me { id } }' }),
    });
    expect(((await res.json()) as GqlResponse).errors![0].extensions).toMatchObject({
      code: 'UNAUTHENTICATED',
    });
    for (const connectionParams of [
      { authorization: bare },
      { Authorization: bare },
      { authToken: bare },
      { authorization: `Token ${bare}` },
    ]) {
      const client = createClient({
        url: t.wsUrl,
        webSocketImpl: WebSocket,
        connectionParams,
        retryAttempts: 0,
        lazy: true,
      });
      const sub = subscribe(client, MEMORY_CHANGED);
      const events = await sub.waitFor(1);
      const errors = events[0]?.errors ?? (sub.error as GqlResponse['errors']);
      expect(errors![0].extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
      sub.unsubscribe();
      await client.dispose();
    }
    // The same token as "Bearer <token>" is accepted.
    const client = createClient({
      url: t.wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${bare}` },
      retryAttempts: 0,
      lazy: true,
    });
    const sub = subscribe(client, MEMORY_CHANGED);
    await sub.ready;
    expect(sub.events).toEqual([]);
    expect(sub.done).toBe(false);
    sub.unsubscribe();
    await client.dispose();
  });

  it('ends a signed-out session: its token is refused over HTTP and WebSocket, its sockets closed', async () => {
    const base = t.url.replace('/graphql', '');
    const own = new URL(t.url).origin;
    // Two sessions of one person (two sign-ins): only the one signed out ends.
    const token = await signToken('sessions-signout', { name: 'Sam' });
    const other = await signToken('sessions-signout', { name: 'Sam', device: 'phone' });
    const opened = await fetch(`${base}/app/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, origin: own },
    });
    expect(opened.status).toBe(200);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0];
    const me = (headers: Record<string, string>) =>
      fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: '{ me { id } }' }),
      });
    // Accepted before, as a bearer and as the cookie: this instance has seen the token.
    expect((await me({ authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await me({ cookie, origin: own })).status).toBe(200);

    // Its sockets (by bearer, and by cookie as the console opens them), and the other's.
    const cookieClient: Client = createClient({
      url: t.wsUrl,
      webSocketImpl: class extends WebSocket {
        constructor(url: string, protocols?: string | string[]) {
          super(url, protocols, { headers: { origin: own, cookie } });
        }
      },
      retryAttempts: 0,
      lazy: true,
    });
    const byBearer = subscribe(t.ws(token), MEMORY_CHANGED);
    const byCookie = subscribe(cookieClient, MEMORY_CHANGED);
    const otherSession = subscribe(t.ws(other), MEMORY_CHANGED);
    const remember = (content: string) =>
      ok(
        'mutation($c: String!) { rememberThis(input: { content: $c }) { outcome } }',
        { c: content },
        other,
      );
    // All three are open once each hears of a change.
    await remember('I keep bees.');
    for (const sub of [byBearer, byCookie, otherSession]) await sub.waitFor(1);

    const signedOut = await fetch(`${base}/app/session`, {
      method: 'DELETE',
      headers: { origin: own, cookie },
    });
    expect(signedOut.status).toBe(200);
    for (const sub of [byBearer, byCookie]) {
      const deadline = Date.now() + 4000;
      while (!sub.done && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(sub.error).toMatchObject({
        code: 4401,
        reason: 'The session was signed out: sign in again.',
      });
    }
    // Refused from now on, however it is sent.
    const ways: Record<string, string>[] = [
      { authorization: `Bearer ${token}` },
      { cookie, origin: own },
    ];
    for (const headers of ways) {
      const res = await me(headers);
      expect(res.status).toBe(401);
      expect(((await res.json()) as GqlResponse).errors![0].extensions).toMatchObject({
        code: 'UNAUTHENTICATED',
        reason: 'TOKEN_REVOKED',
      });
    }
    const again = subscribe(t.ws(token), MEMORY_CHANGED);
    await again.waitFor(1).catch(() => undefined);
    expect(again.error).toMatchObject({ code: 4401 });
    // The other session goes on.
    await remember('I keep two hives.');
    await otherSession.waitFor(2);
    expect(otherSession.done).toBe(false);
    otherSession.unsubscribe();
    await cookieClient.dispose();

    // Kept until the token would have expired, then deleted by the scheduled task.
    const ds = t.app.get(DataSource);
    const [row] = (await ds.query(
      `SELECT expires_at FROM revoked_tokens WHERE token_hash = encode(sha256($1::bytea), 'hex')`,
      [token],
    )) as { expires_at: Date }[];
    const exp = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as {
      exp: number;
    };
    expect(row.expires_at.getTime()).toBe(exp.exp * 1000);
    await ds.query(
      `INSERT INTO revoked_tokens (token_hash, expires_at) VALUES ('expired-session', now() - interval '1 second')`,
    );
    await t.app.get(JobsService).runHandler('scheduled:revoked-tokens-prune', {});
    const left = (await ds.query(`SELECT token_hash FROM revoked_tokens`)) as {
      token_hash: string;
    }[];
    expect(left.map((r) => r.token_hash)).not.toContain('expired-session');
    expect(left).toHaveLength(1);
  });

  it('ends a subscription with UNAUTHENTICATED when its token expires, then completes', async () => {
    const legacyId = await family('Expiring family');
    const shortLived = await signToken(
      'sessions-member',
      { email: 'sessions-member@example.com', email_verified: true },
      {
        expiresIn: Math.floor(Date.now() / 1000) + 2,
      },
    );
    const conversationId = await conversation(legacyId, member);
    const messages = subscribe(t.ws(shortLived), MESSAGE_ADDED, { id: conversationId });
    const memories = subscribe(t.ws(shortLived), MEMORY_CHANGED);
    const facts = subscribe(t.ws(shortLived), FACT_CHANGED, { legacyId });
    await messages.ready;
    for (const sub of [messages, memories, facts]) {
      const { error } = await endedWith(sub, 5000);
      expect(error.extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'TOKEN_EXPIRED' });
    }
  });

  it("ends a removed member's messageAdded and factChanged subscriptions at once, with NOT_FOUND", async () => {
    const legacyId = await family('Removal family');
    const conversationId = await conversation(legacyId, member);
    const messages = subscribe(t.ws(member), MESSAGE_ADDED, { id: conversationId });
    const facts = subscribe(t.ws(member), FACT_CHANGED, { legacyId });
    const memories = subscribe(t.ws(member), MEMORY_CHANGED);
    await Promise.all([messages.ready, facts.ready, memories.ready]);
    await ok(
      'mutation($input: RemoveLegacyMemberInput!) { removeLegacyMember(input: $input) }',
      { input: { legacyId, userId: memberId } },
      owner,
    );
    for (const sub of [messages, facts]) {
      const { error, elapsedMs } = await endedWith(sub);
      expect(error.extensions).toMatchObject({ code: 'NOT_FOUND' });
      expect(elapsedMs).toBeLessThan(2000);
    }
    // memoryChanged is the user's own stream, about their own memories: it goes on.
    expect(memories.done).toBe(false);
    memories.unsubscribe();
  });

  it('ends subscriptions of a member who leaves', async () => {
    const legacyId = await family('Leaving family');
    const conversationId = await conversation(legacyId, member);
    const messages = subscribe(t.ws(member), MESSAGE_ADDED, { id: conversationId });
    await messages.ready;
    await ok('mutation($id: ID!) { leaveLegacy(legacyId: $id) }', { id: legacyId }, member);
    const { error } = await endedWith(messages);
    expect(error.extensions).toMatchObject({ code: 'NOT_FOUND' });
  });

  it("ends members' subscriptions when the legacy is deleted", async () => {
    const legacyId = await family('Deleted family');
    const conversationId = await conversation(legacyId, member);
    const messages = subscribe(t.ws(member), MESSAGE_ADDED, { id: conversationId });
    const facts = subscribe(t.ws(member), FACT_CHANGED, { legacyId });
    await Promise.all([messages.ready, facts.ready]);
    await ok('mutation($id: ID!) { deleteLegacy(id: $id) }', { id: legacyId }, owner);
    for (const sub of [messages, facts]) {
      const { error, elapsedMs } = await endedWith(sub);
      expect(error.extensions).toMatchObject({ code: 'NOT_FOUND' });
      expect(elapsedMs).toBeLessThan(2000);
    }
  });

  it('ends messageAdded and assistantReplyDelta on a conversation when it is deleted', async () => {
    const legacyId = await family('Deletion family');
    const conversationId = await conversation(legacyId, member);
    const other = await conversation(legacyId, member);
    const messages = subscribe(t.ws(member), MESSAGE_ADDED, { id: conversationId });
    const deltas = subscribe(t.ws(member), REPLY_DELTA, { id: conversationId });
    const untouched = subscribe(t.ws(member), MESSAGE_ADDED, { id: other });
    await Promise.all([messages.ready, deltas.ready, untouched.ready]);
    await ok('mutation($id: ID!) { deleteConversation(id: $id) }', { id: conversationId }, member);
    for (const sub of [messages, deltas]) {
      const { error, elapsedMs } = await endedWith(sub);
      expect(error.extensions).toMatchObject({ code: 'NOT_FOUND' });
      expect(elapsedMs).toBeLessThan(2000);
    }
    // A subscription on another conversation is not affected.
    await ok(SEND, { input: { conversationId: other, content: 'still here' } }, member);
    const events = await untouched.waitFor(1);
    expect(events[0]).toEqual({ data: { messageAdded: { content: 'still here' } } });
    untouched.unsubscribe();
  });
});
