import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SCHEMA_NAME } from '../../src/llm/prompts.js';
import { FakeOpenAiServer, FakeRequest, reply } from '../support/fake-openai/fake-openai.server.js';
import { createTestDatabase, ON_SERVER, TestDatabase } from '../support/test-database.js';

import {
  children,
  ensureBuilt,
  gql,
  MAIN,
  mintToken,
  run,
  Service,
  until,
} from '../support/service-process.js';

// DATA_DIR's lock file, generated secret and single process are the embedded database's own: the
// suite's pass on a real server leaves this block to the embedded pass.
const describeEmbedded = ON_SERVER ? describe.skip : describe;

describeEmbedded('The service as a process', () => {
  let db: TestDatabase;
  let service: Service;
  let url: string;
  let token: string;
  /** Started early so that their start-up overlaps the rest (each loads the whole app). */
  let badConfig: Service;
  let second: Service;

  beforeAll(async () => {
    ensureBuilt();
    badConfig = run(MAIN, { PORT: 'abc', DATABASE_URL: 'mysql://x', JWT_SECRET: 'short' });
    db = await createTestDatabase();
    // No JWT_SECRET: the embedded mode generates one into DATA_DIR/jwt-secret.
    service = run(MAIN, {
      PORT: '0',
      DATA_DIR: db.dataDir,
      LOG_LEVEL: 'info',
      AGENT_REPLY: 'off',
      // The import in flight at SIGTERM must finish; on a loaded machine it can take over the
      // default 10 s. The restart below tests the timeout itself.
      SHUTDOWN_TIMEOUT_MS: '45000',
    });
    url = await service.listening;
    second = run(MAIN, { PORT: '0', DATA_DIR: db.dataDir, LOG_LEVEL: 'silent' });
    token = mintToken({ DATA_DIR: db.dataDir }, '--sub', 'tester', '--email', 't@example.com');
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
    await db?.remove();
  });

  it('accepts a token minted by the CLI from the generated secret in DATA_DIR', async () => {
    expect(existsSync(join(db.dataDir, 'jwt-secret'))).toBe(true);
    const me = await gql(url, token, '{ me { email isPlatformAdmin } }');
    expect(me.data).toEqual({ me: { email: 't@example.com', isPlatformAdmin: false } });

    const admin = mintToken(
      { DATA_DIR: db.dataDir },
      '--sub',
      'root',
      '--email',
      'root@example.com',
      '--admin',
    );
    const asAdmin = await gql(url, admin, '{ me { email isPlatformAdmin } }');
    expect(asAdmin.data).toEqual({ me: { email: 'root@example.com', isPlatformAdmin: true } });

    const forged = `${token.slice(0, token.lastIndexOf('.'))}.${'A'.repeat(43)}`;
    const refused = await gql(url, forged, '{ me { email } }');
    expect(refused.errors![0].extensions!.code).toBe('UNAUTHENTICATED');

    // It expires, after JWT_MAX_AGE (24 h) at most, and vouches for the email it was given.
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
    expect(claims).toMatchObject({ email: 't@example.com', email_verified: true });
    expect(claims.exp - claims.iat).toBe(24 * 3600);
    expect(() => mintToken({ DATA_DIR: db.dataDir }, '--sub', 'x', '--expires-in', '30d')).toThrow(
      /JWT_MAX_AGE/,
    );
  });

  it('refuses a second process on the same DATA_DIR, leaving the first one serving', async () => {
    const { code } = await second.exited;
    expect(code).not.toBe(0);
    expect(second.stderr).toContain(`The data directory ${resolve(db.dataDir)} is in use`);
    expect(second.stderr).toContain(`pid ${service.proc.pid}`);
    // The holder's pid, and when it started (so that a pid reused after a crash is told apart).
    expect(readFileSync(join(db.dataDir, 'keepsake.lock'), 'utf8')).toMatch(
      new RegExp(`^${service.proc.pid} \\d+$`),
    );
    const health = await fetch(url.replace('/graphql', '/health/ready'));
    expect(health.status).toBe(200);
  });

  it('lists every invalid variable in one message and exits non-zero', async () => {
    const { code } = await badConfig.exited;
    expect(code).toBe(1);
    expect(badConfig.stderr).toMatch(/^Invalid configuration:\n/);
    expect(badConfig.stderr).toMatch(/- PORT .*"abc"/);
    expect(badConfig.stderr).toMatch(/- DATABASE_URL .*postgres/);
    expect(badConfig.stderr).toMatch(/- JWT_SECRET .*32 characters/);
    // One message, and the secret itself is not echoed.
    expect(badConfig.stderr.match(/Invalid configuration/g)).toHaveLength(1);
    expect(badConfig.stderr).not.toContain('short');
    expect(badConfig.stdout).toBe('');
  });

  it('logs JSON lines with a request id, and never message content at info level', async () => {
    const marker = `marker-${randomUUID()}`;
    const requestId = `process-test-${randomUUID()}`;
    const legacy = await gql<{ createLegacy: { id: string } }>(
      url,
      token,
      'mutation { createLegacy(input: { name: "Logs" }) { id } }',
    );
    const conversation = await gql<{ startConversation: { id: string } }>(
      url,
      token,
      'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
      { l: legacy.data!.createLegacy.id },
    );
    const conversationId = conversation.data!.startConversation.id;
    const SEND = `mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`;
    const sent = await gql(
      url,
      token,
      SEND,
      { input: { conversationId, content: `He said ${marker}`, clientMessageId: 'c1' } },
      requestId,
      'Send',
    );
    expect(sent.errors).toBeUndefined();
    expect(sent.requestId).toBe(requestId);
    // A refused send (same clientMessageId, other content) must not log its content either.
    const conflict = await gql(url, token, SEND, {
      input: { conversationId, content: `Other ${marker}`, clientMessageId: 'c1' },
    });
    expect(conflict.errors![0].extensions!.code).toBe('CONFLICT');
    expect(conflict.requestId).toMatch(/^[0-9a-f-]{36}$/);

    await until(() => service.logs().some((l) => l.requestId === conflict.requestId));
    const logs = service.logs();
    expect(logs.every((l) => typeof l.time === 'string' && typeof l.level === 'string')).toBe(true);
    expect(logs.find((l) => l.requestId === requestId)).toMatchObject({
      level: 'info',
      msg: 'operation',
      operationName: 'Send',
      operation: 'mutation',
      userId: expect.any(String),
      errors: [],
    });
    expect(logs.find((l) => l.requestId === conflict.requestId)).toMatchObject({
      msg: 'operation',
      errors: ['CONFLICT'],
    });
    expect(logs.filter((l) => l.msg === 'operation').every((l) => l.requestId)).toBe(true);
    expect(service.stdout).not.toContain(marker);
    expect(service.stderr).not.toContain(marker);
  });

  describe('shutdown', () => {
    let shutdown: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let restarted: Service;

    afterAll(async () => {
      if (restarted && restarted.proc.exitCode === null && restarted.proc.signalCode === null) {
        restarted.proc.kill('SIGKILL');
        await restarted.exited;
      }
    });

    it('on SIGTERM, finishes the request in flight, then closes the database', async () => {
      const legacyId = (
        await gql<{ createLegacy: { id: string } }>(
          url,
          token,
          'mutation { createLegacy(input: { name: "Shutdown" }) { id } }',
        )
      ).data!.createLegacy.id;
      const messages = Array.from({ length: 5000 }, (_, i) => ({
        role: i % 2 ? 'ASSISTANT' : 'USER',
        content: `turn ${i}: a few words so that the import takes a moment`,
        occurredAt: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(),
      }));
      const requestId = `import-${randomUUID()}`;
      const importing = gql<{ importConversation: { importedCount: number } }>(
        url,
        token,
        `mutation($input: ImportConversationInput!) { importConversation(input: $input) { importedCount } }`,
        { input: { legacyId, title: 'Imported before shutdown', messages } },
        requestId,
      ).then((res) => ({ res, at: performance.now() }));
      await new Promise((r) => setTimeout(r, 150));
      const signalledAt = performance.now();
      service.proc.kill('SIGTERM');

      const { res, at } = await importing;
      expect(res.errors).toBeUndefined();
      expect(res.data!.importConversation.importedCount).toBe(5000);
      expect(at).toBeGreaterThan(signalledAt); // it really was in flight
      shutdown = await service.exited;
      // A clean shutdown: not a crash (status 1). See the exit status test below.
      expect(shutdown.code === 0 || shutdown.signal === 'SIGTERM').toBe(true);

      const logs = service.logs();
      const operation = logs.findIndex((l) => l.requestId === requestId && l.msg === 'operation');
      const closed = logs.findIndex((l) => l.msg === 'database closed');
      expect(operation).toBeGreaterThanOrEqual(0);
      expect(closed).toBeGreaterThan(operation);
      expect(logs.filter((l) => l.level === 'error')).toEqual([]);
      expect(existsSync(join(db.dataDir, 'keepsake.lock'))).toBe(false);

      // A restart on the same directory sees the import.
      restarted = run(MAIN, {
        PORT: '0',
        DATA_DIR: db.dataDir,
        LOG_LEVEL: 'warn',
        SHUTDOWN_TIMEOUT_MS: '500',
      });
      const restartedUrl = await restarted.listening;
      const list = await gql<{
        conversations: { nodes: { title: string; messageCount: number }[] };
      }>(
        restartedUrl,
        token,
        'query($l: ID!) { conversations(legacyId: $l) { nodes { title messageCount } } }',
        { l: legacyId },
      );
      expect(list.data!.conversations.nodes).toEqual([
        { title: 'Imported before shutdown', messageCount: 5000 },
      ]);
    }, 150_000);

    it('exits with status 0 after a graceful SIGTERM', () => {
      expect(shutdown).toEqual({ code: 0, signal: null });
    });

    it('stops waiting for a stalled request after SHUTDOWN_TIMEOUT_MS', async () => {
      const port = Number(new URL(await restarted.listening).port);
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(
        'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          'Content-Length: 100\r\n\r\n{"query":',
      );
      await new Promise((r) => setTimeout(r, 200));
      restarted.proc.kill('SIGTERM');
      // Without the timeout it would wait for the stalled body forever; the margin over 500 ms
      // is for a loaded machine closing the database.
      const exited = await Promise.race([
        restarted.exited.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 8000)),
      ]);
      socket.destroy();
      expect(exited).toBe(true);
    }, 15_000);
  });
});

describe('A restart in the middle of a job', () => {
  let fake: FakeOpenAiServer;
  let db: TestDatabase;
  const isSummary = (r: FakeRequest) =>
    r.body.response_format?.json_schema?.name === SCHEMA_NAME.summarizeTurns;

  beforeAll(async () => {
    ensureBuilt();
    fake = await FakeOpenAiServer.start();
    db = await createTestDatabase();
  }, 120_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
    await fake?.close();
    await db?.remove();
  });

  it('completes the summarization a killed process was doing, exactly once', async () => {
    // A server has no DATA_DIR secret to generate: the service and the CLI share one.
    const secret: Record<string, string> = ON_SERVER
      ? { JWT_SECRET: 'restart-test-secret-of-at-least-32-chars' }
      : {};
    // On a server other instances may be running the job, so it comes back when its lease
    // runs out; the embedded database has one process, which hands it back at boot.
    const lease: Record<string, string> = ON_SERVER ? { JOBS_LEASE_MS: '3000' } : {};
    const env = {
      PORT: '0',
      ...db.env,
      ...secret,
      LOG_LEVEL: 'warn',
      AGENT_REPLY: 'off',
      LLM: 'openai',
      LLM_BASE_URL: fake.url,
      LLM_MODEL: 'fake',
      EMBEDDINGS: 'openai',
      EMBEDDINGS_BASE_URL: fake.url,
      EMBEDDINGS_MODEL: 'fake-embed',
      EMBEDDINGS_DIMENSIONS: '64',
      JOBS_POLL_MS: '100',
      ...lease,
    };
    // The first summary request never gets its answer in time: the process dies waiting.
    let summaryCalls = 0;
    fake.setHandler('chat', (r) =>
      isSummary(r) && ++summaryCalls === 1 ? reply.auto(60_000) : reply.auto(),
    );
    const first = run(MAIN, env);
    const url = await first.listening;
    const token = mintToken(
      { ...db.env, ...secret },
      '--sub',
      'restart-owner',
      '--email',
      'r@example.com',
    );
    const legacy = await gql<{ createLegacy: { id: string } }>(
      url,
      token,
      'mutation { createLegacy(input: { name: "Joe" }) { id } }',
    );
    const imported = await gql<{ importConversation: { conversation: { id: string } } }>(
      url,
      token,
      `mutation($input: ImportConversationInput!) {
         importConversation(input: $input) { conversation { id } } }`,
      {
        input: {
          legacyId: legacy.data!.createLegacy.id,
          messages: Array.from({ length: 31 }, (_, i) => ({
            role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
            content: i % 2 === 0 ? `Joe built wooden boats, as turn ${i} says.` : 'I see.',
            occurredAt: new Date(Date.UTC(2020, 0, 1, 0, i)).toISOString(),
          })),
        },
      },
    );
    const conversationId = imported.data!.importConversation.conversation.id;
    await until(() => summaryCalls === 1, 20_000);
    // On a server the other instance is already serving when this one dies (and, the job's lease
    // being renewed, does not take the job from the living one); embedded, it starts after.
    const other = ON_SERVER ? run(MAIN, { ...env, LOG_LEVEL: 'info' }) : null;
    if (other) await other.listening;
    if (other) await new Promise((r) => setTimeout(r, 4000));
    expect(summaryCalls).toBe(1);
    first.proc.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const second = other ?? run(MAIN, { ...env, LOG_LEVEL: 'info' });
    const secondUrl = await second.listening;
    const chunks = async () =>
      (
        await gql<{ conversation: { chunks: { rangeStart: number; rangeEnd: number }[] } }>(
          secondUrl,
          token,
          'query($id: ID!) { conversation(id: $id) { chunks { rangeStart rangeEnd } } }',
          { id: conversationId },
        )
      ).data!.conversation.chunks;
    const deadline = Date.now() + 20_000;
    while ((await chunks()).length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    // Give a second run the time to show itself, if there were one.
    await new Promise((r) => setTimeout(r, 500));
    expect(await chunks()).toEqual([{ rangeStart: 0, rangeEnd: 19 }]);
    expect(summaryCalls).toBe(2);
    // Handed back once: at boot on the embedded database, once its lease ran out on a server.
    const handedBack = second.logs().filter((l) => l.msg === 'interrupted jobs handed back');
    expect(handedBack.map((l) => Number(l.requeued) + Number(l.merged))).toEqual([1]);
    const facts = await gql<{ facts: { nodes: { content: string; mentionCount: number }[] } }>(
      secondUrl,
      token,
      'query($l: ID!) { facts(legacyId: $l) { nodes { content mentionCount } } }',
      { l: legacy.data!.createLegacy.id },
    );
    // The fact taken from that range, once, with one mention.
    expect(facts.data!.facts.nodes).toEqual([
      { content: 'Joe built wooden boats, as turn 0 says.', mentionCount: 1 },
    ]);
  }, 90_000);
});
