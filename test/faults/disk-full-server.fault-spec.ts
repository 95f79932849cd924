import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { children, ensureBuilt } from '../support/service-process.js';
import { GENEROUS_LIMITS, signToken, TEST_JWT_SECRET } from '../support/test-app.js';
import { ON_SERVER } from '../support/test-database.js';
import { call, Outcome, readTurns, Talk } from './support/clients.js';
import { PgServer } from './support/pg-server.js';
import { report } from './support/report.js';
import {
  faultDir,
  FaultService,
  freePort,
  keepOnFailure,
  keeping,
  seededRandom,
  sleep,
} from './support/service.js';
import { SmallDisk } from './support/small-disk.js';

const MB = 1024 * 1024;
const SEND = `mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`;

/**
 * The server's data directory on a small disk that fills up, in the two ways production meets it.
 * With the WAL on a volume of its own (initdb --waldir, as docs/operations.md advises), PostgreSQL refuses
 * a statement that cannot extend a table (disk_full): Keepsake answers DISK_FULL, reads go on,
 * and once space is freed the same service writes again. With the WAL on the full disk too,
 * PostgreSQL stops (a WAL write that fails is a PANIC): Keepsake answers DATABASE_UNAVAILABLE
 * at once, and once space is freed and the server's supervisor has started it again, recovers
 * with no restart of its own. Nothing acknowledged is lost either way.
 */
(ON_SERVER ? describe : describe.skip)('a full disk under the database server', () => {
  const dir = faultDir('disk-full-server');
  let disk: SmallDisk | null = null;
  let skipped: string | null = null;
  const servers: PgServer[] = [];

  beforeAll(() => {
    ensureBuilt();
    const mounted = SmallDisk.mount(join(dir, 'disk'), 320);
    if (typeof mounted === 'string') {
      skipped = mounted;
      report(`full disk, server: SKIPPED (${mounted})`);
    } else disk = mounted;
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const server of servers) {
      try {
        server.stop();
      } catch {
        // stopped
      }
      // The server's own log, kept with the service's (the small disk goes with the test).
      const log = join(server.dir, 'server.log');
      if (existsSync(log)) cpSync(log, `${server.dir.replace(disk!.path, dir)}-server.log`);
    }
    await sleep(200);
    disk?.unmount();
    keepOnFailure(dir);
  });

  /** A server with its data on the small disk, the service on it, and a member writing. */
  async function fillUp(name: string, walOnItsOwn: boolean) {
    const pg = new PgServer(
      await freePort(),
      join(disk!.path, name),
      walOnItsOwn ? join(dir, `${name}-wal`) : undefined,
    );
    servers.push(pg);
    const databaseUrl = pg.start();
    const service = new FaultService(
      {
        ...GENEROUS_LIMITS,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        DATA_DIR: join(dir, `${name}-data`),
        DATABASE_URL: databaseUrl,
        JWT_SECRET: TEST_JWT_SECRET,
        AGENT_REPLY: 'off',
        // The disk is what this is about: no indexing of the imported letters meanwhile.
        JOBS_WORKER: 'false',
        IMPORTS_PER_USER_PER_HOUR: '100000',
        CONVERSATIONS_PER_USER_PER_DAY: '100000',
        LOG_LEVEL: 'info',
        SEARCH_KINDS: 'false',
      },
      join(dir, `${name}-logs`),
    );
    service.spawn();
    await service.ready();
    const token = await signToken(`full-${name}`, {}, { expiresIn: '1h' });
    const ok = async <T>(query: string, variables: Record<string, unknown> = {}) => {
      const outcome = await call<T>(service.base, token, query, variables);
      if (outcome.kind !== 'ok') throw new Error(`${query}: ${JSON.stringify(outcome)}`);
      return outcome.data;
    };
    const legacyId = (
      await ok<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Opa" }) { id } }',
      )
    ).createLegacy.id;
    const conversationId = (
      await ok<{ startConversation: { id: string } }>(
        'mutation($l: ID!) { startConversation(input: { legacyId: $l }) { id } }',
        { l: legacyId },
      )
    ).startConversation.id;
    const talk = new Talk(seededRandom(11));
    const acknowledged = new Map<string, string>();
    const contents = new Map<string, string>();
    let n = 0;
    const send = async (clientMessageId = `full-${++n}`): Promise<Outcome<unknown>> => {
      const content =
        contents.get(clientMessageId) ??
        Array.from({ length: 80 }, (_, i) => talk.sentence(n * 100 + i)).join(' ');
      contents.set(clientMessageId, content);
      const outcome = await call(service.base, token, SEND, {
        input: { conversationId, content, clientMessageId },
      });
      if (outcome.kind === 'ok') acknowledged.set(clientMessageId, content);
      return outcome;
    };
    for (let i = 0; i < 5; i++) expect((await send()).kind).toBe('ok');
    disk!.fill(6 * MB);
    // Imported letters fill it quickly; each import is one transaction, whole or refused.
    const imports: { id: string; turns: number }[] = [];
    const importLetters = async (): Promise<Outcome<unknown>> => {
      const messages = Array.from({ length: 200 }, (_, i) => ({
        role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
        content: Array.from({ length: 8 }, (__, j) => talk.sentence(i * 10 + j)).join(' '),
        occurredAt: new Date(Date.UTC(2020, 0, 1, 0, i)).toISOString(),
      }));
      const o = await call<{ importConversation: { conversation: { id: string } } }>(
        service.base,
        token,
        `mutation($input: ImportConversationInput!) { importConversation(input: $input) { conversation { id } } }`,
        { input: { legacyId, messages } },
      );
      if (o.kind === 'ok')
        imports.push({ id: o.data.importConversation.conversation.id, turns: 200 });
      return o;
    };
    const refusals: Outcome<unknown>[] = [];
    const refusedIds: string[] = [];
    for (let i = 0; i < 3000 && refusals.length < 3; i++) {
      const o = refusals.length === 0 && i % 4 !== 3 ? await importLetters() : await send();
      if (o.kind === 'refused') {
        refusals.push(o);
        if (i % 4 === 3 || refusals.length > 1) refusedIds.push(`full-${n}`);
      } else expect(o.kind).toBe('ok');
    }
    expect(refusals).toHaveLength(3);
    const read = () => call(service.base, token, '{ me { id } }', {});

    /** Frees the space (and lets the supervisor start the server), then checks nothing was lost. */
    const recover = async () => {
      disk!.free();
      const freedAt = performance.now();
      pg.start();
      let back: Outcome<unknown> = { kind: 'lost', error: '' };
      for (let i = 0; i < 200 && back.kind !== 'ok'; i++) {
        back = await send(refusedIds[0]);
        if (back.kind !== 'ok') await sleep(250);
      }
      expect(back.kind).toBe('ok');
      const backMs = performance.now() - freedAt;
      // What was refused, sent again, is stored once; everything acknowledged is there.
      for (const id of refusedIds) expect((await send(id)).kind).toBe('ok');
      const turns = await readTurns(service.base, token, conversationId);
      const kept = new Map(turns.map((t) => [t.clientMessageId, t.content]));
      const ids = turns.map((t) => t.clientMessageId);
      expect(ids.length).toBe(new Set(ids).size);
      for (const [id, content] of acknowledged) expect(kept.get(id)).toBe(content);
      for (const imported of imports) {
        expect((await readTurns(service.base, token, imported.id)).length).toBe(imported.turns);
      }
      await service.stop();
      pg.stop();
      disk!.free();
      return { backMs, acknowledged: acknowledged.size };
    };
    return { refusals, read, recover };
  }

  it('with the WAL on its own volume: refuses writes with DISK_FULL, keeps reads, recovers by itself', () =>
    keeping(async () => {
      if (skipped || !disk) return;
      const { refusals, read, recover } = await fillUp('waldir', true);
      for (const r of refusals) {
        expect(r).toMatchObject({ kind: 'refused', code: 'UNAVAILABLE', reason: 'DISK_FULL' });
        expect(r.kind === 'refused' && r.message).toMatch(/storage is full/i);
      }
      expect((await read()).kind).toBe('ok');
      const { backMs, acknowledged } = await recover();
      report(
        `full disk, server with its WAL on a volume of its own: writes refused with DISK_FULL, reads served, ` +
          `writes back ${Math.round(backMs)} ms after space was freed, no restart; ${acknowledged} acknowledged turns kept`,
      );
    }));

  it('with the WAL on the full disk too: answers DATABASE_UNAVAILABLE at once and recovers once the server is back', () =>
    keeping(async () => {
      if (skipped || !disk) return;
      const { refusals, read, recover } = await fillUp('onedisk', false);
      for (const r of refusals) {
        expect(r).toMatchObject({ kind: 'refused', code: 'UNAVAILABLE' });
        expect(['DISK_FULL', 'DATABASE_UNAVAILABLE']).toContain(
          r.kind === 'refused' ? r.reason : r.kind,
        );
      }
      const started = performance.now();
      const whileFull = await read();
      expect(performance.now() - started).toBeLessThan(5000);
      if (whileFull.kind !== 'ok') expect(whileFull).toMatchObject({ code: 'UNAVAILABLE' });
      const { backMs, acknowledged } = await recover();
      report(
        `full disk, server with its WAL on the same disk: ${JSON.stringify(
          refusals.map((r) => (r.kind === 'refused' ? r.reason : r.kind)),
        )}, a read ${whileFull.kind === 'ok' ? 'served' : 'refused (the server had stopped)'}; ` +
          `writes back ${Math.round(backMs)} ms after space was freed and the server started, no restart of Keepsake; ${acknowledged} acknowledged turns kept`,
      );
    }));
});
