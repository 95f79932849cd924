import { HEALTH_TOKEN, readyDetails } from '../support/health.js';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, children, mintToken } from '../support/service-process.js';
import { GENEROUS_LIMITS } from '../support/test-app.js';
import { createTestDatabase, ON_SERVER } from '../support/test-database.js';
import { call, Outcome, readTurns, Talk, upload } from './support/clients.js';
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
 * The embedded database's data directory on a small disk that fills up: writes are refused with
 * a reason that says storage is full, reads keep working, nothing is half-written, and once space
 * is freed everything works again, without a restart; the directory still opens afterwards.
 */
(ON_SERVER ? describe.skip : describe)('a full disk under the embedded database', () => {
  const dir = faultDir('disk-full-embedded');
  let disk: SmallDisk | null = null;
  let skipped: string | null = null;
  let service: FaultService;

  beforeAll(() => {
    ensureBuilt();
    const mounted = SmallDisk.mount(join(dir, 'disk'), 160);
    if (typeof mounted === 'string') {
      skipped = mounted;
      report(`full disk, embedded: SKIPPED (${mounted})`);
    } else disk = mounted;
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await sleep(200);
    disk?.unmount();
    keepOnFailure(dir);
  });

  it('refuses writes with DISK_FULL, keeps reads, loses nothing and recovers by itself', () =>
    keeping(async () => {
      if (skipped || !disk) return;
      const port = await freePort();
      // A migrated database, copied onto the small disk (a first boot there takes half a minute).
      const template = await createTestDatabase({ embedded: true });
      cpSync(template.dataDir, join(disk.path, 'data'), { recursive: true });
      await template.remove();
      const env = {
        ...GENEROUS_LIMITS,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: join(disk.path, 'data'),
        // The family's own words fill the disk here, not the agent's.
        AGENT_REPLY: 'off',
        LOG_LEVEL: 'info',
        STORAGE_RESERVE_MB: '24',
        STORAGE_CHECK_MS: '200',
        JOBS_POLL_MS: '200',
        SEARCH_KINDS: 'false',
        METRICS_TOKEN: HEALTH_TOKEN,
      };
      service = new FaultService(env, join(dir, 'logs'));
      service.spawn();
      await service.ready();
      const token = mintToken(
        { DATA_DIR: env.DATA_DIR },
        '--sub',
        'full',
        '--email',
        'f@example.com',
      );
      const gql = <T>(query: string, variables: Record<string, unknown> = {}) =>
        call<T>(service.base, token, query, variables);
      const ok = async <T>(query: string, variables: Record<string, unknown> = {}) => {
        const outcome = await gql<T>(query, variables);
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
      const acknowledged = new Map<string, string>();
      const contents = new Map<string, string>();
      const talk = new Talk(seededRandom(7));
      let n = 0;
      const send = async (clientMessageId = `full-${++n}`): Promise<Outcome<unknown>> => {
        // Words that do not compress away: the disk fills as it would with real letters.
        const content =
          contents.get(clientMessageId) ??
          Array.from({ length: 30 }, (_, i) => talk.sentence(n * 100 + i)).join(' ');
        contents.set(clientMessageId, content);
        const outcome = await gql(SEND, {
          input: { conversationId, content, clientMessageId },
        });
        if (outcome.kind === 'ok') acknowledged.set(clientMessageId, content);
        return outcome;
      };
      for (let i = 0; i < 5; i++) expect((await send()).kind).toBe('ok');

      // The disk fills up: others' files leave little room, and the family goes on writing.
      disk.fill(27 * MB);
      let refused: Outcome<unknown> | null = null;
      const refusedIds: string[] = [];
      for (let i = 0; i < 400 && !refused; i++) {
        const document = new TextEncoder().encode(
          `# Letter ${i}\n\n${'Dear Opa, the radio works. '.repeat(20_000)}`,
        );
        const outcomes = [
          await send(),
          await upload(service.base, token, legacyId, document, `letter-${i}.md`, `Letter ${i}`),
        ];
        for (const o of outcomes) {
          if (o.kind === 'refused') {
            expect(o).toMatchObject({ code: 'UNAVAILABLE', reason: 'DISK_FULL' });
            expect(o.message).toMatch(/storage is full/i);
            refused = o;
          } else expect(o.kind).toBe('ok');
        }
        if (outcomes[0].kind === 'refused') refusedIds.push(`full-${n}`);
      }
      expect(refused).not.toBeNull();
      const freeWhenRefused = disk.freeBytes;

      // Once full, every write is refused before any of it is done; reads go on, and the
      // health check says why.
      const again = await send();
      expect(again).toMatchObject({ kind: 'refused', code: 'UNAVAILABLE', reason: 'DISK_FULL' });
      const refusedUpFront = `full-${n}`;
      refusedIds.push(refusedUpFront);
      const stored = new Map(
        (await readTurns(service.base, token, conversationId)).map((t) => [
          t.clientMessageId,
          t.content,
        ]),
      );
      for (const [id, content] of acknowledged) expect(stored.get(id)).toBe(content);
      expect(stored.has(refusedUpFront)).toBe(false);
      const recall = await gql<{ recall: { edges: unknown[] } }>(
        'query($l: ID!) { recall(legacyId: $l, query: "radios in the cellar") { edges { node { id } } } }',
        { l: legacyId },
      );
      expect(recall.kind).toBe('ok');
      const health = await readyDetails(service.base);
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ storage: { status: 'full' } });

      // Space is freed: writes resume by themselves, and what was refused is sent again.
      disk.free();
      let resumed: Outcome<unknown> = again;
      for (let i = 0; i < 50 && resumed.kind !== 'ok'; i++) {
        await sleep(200);
        resumed = await send(refusedUpFront);
      }
      expect(resumed.kind).toBe('ok');
      for (const id of refusedIds) expect((await send(id)).kind).toBe('ok');

      // Filled to the last byte at once (another program's download, say): writes fail with a
      // reason, never an internal error, and the database comes back once there is room.
      disk.fill(0);
      for (let i = 0; i < 5; i++) {
        const o = await send();
        if (o.kind === 'refused') expect(o.code).toBe('UNAVAILABLE');
        else expect(o.kind).toBe('ok');
      }
      disk.free();
      let back: Outcome<unknown> = { kind: 'lost', error: '' };
      for (let i = 0; i < 100 && back.kind !== 'ok'; i++) {
        await sleep(300);
        back = await send();
      }
      expect(back.kind).toBe('ok');

      // Stopped and started again: the directory opens, with everything acknowledged.
      await service.stop();
      service.spawn();
      await service.ready();
      const after = await readTurns(service.base, token, conversationId);
      const kept = new Map(after.map((t) => [t.clientMessageId, t.content]));
      // Each acknowledged turn once, with its words; those refused then sent again, once too.
      const ids = after.map((t) => t.clientMessageId).filter((id) => id !== null);
      expect(ids.length).toBe(new Set(ids).size);
      for (const [id, content] of acknowledged) expect(kept.get(id)).toBe(content);
      for (const id of refusedIds) expect(kept.get(id)).toBe(contents.get(id));
      report(
        `full disk, embedded: writes refused with DISK_FULL at ${Math.round(freeWhenRefused / MB)} MB free ` +
          `(reserve 24 MB), reads served, writes back without a restart; ${acknowledged.size} acknowledged turns kept`,
      );
    }));
});
