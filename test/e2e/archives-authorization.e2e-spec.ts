import { JobsService } from '../../src/jobs/jobs.service.js';
import { joinLegacy } from '../support/membership.js';
import { GqlResponse, startTestApp, subscribe, TestApp, TestUser } from '../support/test-app.js';
import { ARCHIVE_FIELDS, ArchiveView, exportArchive, uploadArchive } from '../support/archives.js';

/**
 * Every operation on archives, on every transport, for every kind of caller: only members
 * export a legacy; an archive (its record, its download, its progress events) is its requester's
 * alone, and no longer theirs once they leave the legacy exported; an upload is its uploader's
 * to import. Anyone else is told it does not exist.
 */
type Caller = 'anonymous' | 'outsider' | 'member' | 'requester';

describe('legacy archives authorization', () => {
  let t: TestApp;
  let jobs: JobsService;
  const users = {} as Record<Exclude<Caller, 'anonymous'>, TestUser>;
  let legacyId: string;
  let exportId: string;
  let uploadId: string;

  const callerOf = (c: Caller) => (c === 'anonymous' ? null : users[c]);
  const codeOf = (res: GqlResponse) =>
    res.errors ? (res.errors[0].extensions?.code as string) : 'OK';

  beforeAll(async () => {
    t = await startTestApp({ AGENT_REPLY: 'off', JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    jobs = t.app.get(JobsService);
    users.requester = await t.user('archives-authz-requester', {
      email: 'req@archives-authz.example.com',
    });
    users.member = await t.user('archives-authz-member', {
      email: 'member@archives-authz.example.com',
    });
    users.outsider = await t.user('archives-authz-outsider', {
      email: 'out@archives-authz.example.com',
    });
    const created = await t.gql<{ createLegacy: { id: string } }>(
      'mutation { createLegacy(input: { name: "Aunt May" }) { id } }',
      {},
      users.member,
    );
    legacyId = created.data!.createLegacy.id;
    await joinLegacy(t, users.member, legacyId, users.requester);
    const exported = await exportArchive(t, users.requester, legacyId);
    exportId = exported.archive.id;
    const uploaded = await uploadArchive(t, users.requester, exported.zip);
    expect(uploaded.status).toBe(201);
    uploadId = uploaded.body.id as string;
  }, 300_000);
  afterAll(() => t?.close());

  const table: {
    authorizes: string;
    caller: Caller;
    code: string;
    run: (as: TestUser | null) => Promise<GqlResponse>;
  }[] = [];
  const gql = (query: string, variables: () => Record<string, unknown>) => (as: TestUser | null) =>
    t.gql(query, variables(), as);
  const EXPORT = gql('mutation($l: ID!) { exportLegacyArchive(legacyId: $l) { id } }', () => ({
    l: legacyId,
  }));
  const ONE = gql(`query($id: ID!) { legacyArchive(id: $id) { ${ARCHIVE_FIELDS} } }`, () => ({
    id: exportId,
  }));
  const LIST_OF_LEGACY = gql(
    'query($l: ID!) { legacyArchives(legacyId: $l) { nodes { id } } }',
    () => ({ l: legacyId }),
  );
  const IMPORT = gql('mutation($id: ID!) { importLegacyArchive(id: $id) { id status } }', () => ({
    id: uploadId,
  }));
  for (const [caller, code] of [
    ['anonymous', 'UNAUTHENTICATED'],
    ['outsider', 'NOT_FOUND'],
    ['member', 'OK'],
  ] as const) {
    table.push({ authorizes: 'exportLegacyArchive', caller, code, run: EXPORT });
    table.push({ authorizes: 'legacyArchives', caller, code, run: LIST_OF_LEGACY });
  }
  for (const [caller, code] of [
    ['anonymous', 'UNAUTHENTICATED'],
    ['outsider', 'NOT_FOUND'],
    ['member', 'NOT_FOUND'],
    ['requester', 'OK'],
  ] as const) {
    table.push({ authorizes: 'legacyArchive', caller, code, run: ONE });
  }
  for (const [caller, code] of [
    ['anonymous', 'UNAUTHENTICATED'],
    ['outsider', 'NOT_FOUND'],
    ['member', 'NOT_FOUND'],
  ] as const) {
    table.push({ authorizes: 'importLegacyArchive', caller, code, run: IMPORT });
  }

  it.each(table.map((row) => [row.authorizes, row.caller, row.code, row] as const))(
    '%s as %s: %s',
    async (_op, caller, code, row) => {
      expect(codeOf(await row.run(callerOf(caller)))).toBe(code);
    },
  );

  it('lists only the caller’s own archives', async () => {
    const mine = await t.gql<{ legacyArchives: { nodes: { id: string }[] } }>(
      '{ legacyArchives { nodes { id kind } } }',
      {},
      users.requester,
    );
    expect(mine.data!.legacyArchives.nodes.map((n) => n.id).sort()).toEqual(
      [exportId, uploadId].sort(),
    );
    const theirs = await t.gql<{ legacyArchives: { nodes: { id: string }[] } }>(
      '{ legacyArchives { nodes { id } } }',
      {},
      users.member,
    );
    const ids = theirs.data!.legacyArchives.nodes.map((n) => n.id);
    expect(ids).not.toContain(exportId);
    expect(ids).not.toContain(uploadId);
  });

  it('serves the download to its requester alone', async () => {
    const get = (as: TestUser | null, id = exportId) =>
      fetch(new URL(`/archives/${id}/file`, t.url), {
        headers: as ? { authorization: `Bearer ${as.token}` } : {},
      });
    const expected: [Caller, number, string | null][] = [
      ['anonymous', 401, 'UNAUTHENTICATED'],
      ['outsider', 404, 'NOT_FOUND'],
      ['member', 404, 'NOT_FOUND'],
      ['requester', 200, null],
    ];
    for (const [caller, status, code] of expected) {
      const res = await get(callerOf(caller));
      expect({ caller, status: res.status }).toEqual({ caller, status });
      if (code) {
        const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
        expect(body.errors[0].extensions.code).toBe(code);
      } else {
        expect(res.headers.get('content-type')).toBe('application/zip');
        expect(res.headers.get('content-disposition')).toContain('Aunt%20May');
        expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
      }
    }
    // An upload is not for download; a malformed id is refused.
    expect((await get(users.requester, uploadId)).status).toBe(409);
    expect((await get(users.requester, 'not-an-id')).status).toBe(400);
  });

  it('accepts uploads only with a token', async () => {
    const res = await uploadArchive(t, null, new Uint8Array([1, 2, 3]));
    expect(res.status).toBe(401);
  });

  // authorizes: 'legacyArchiveProgress' (its own test: a subscription answers over WebSocket)
  it('sends progress events over WebSocket to the requester alone, and ends with the export', async () => {
    const started = await t.gql<{ exportLegacyArchive: ArchiveView }>(
      `mutation($l: ID!) { exportLegacyArchive(legacyId: $l) { ${ARCHIVE_FIELDS} } }`,
      { l: legacyId },
      users.requester,
    );
    const id = started.data!.exportLegacyArchive.id;
    const query =
      'subscription($id: ID!) { legacyArchiveProgress(id: $id) { id status stage progress } }';
    const anonymous = subscribe(t.ws(null), query, { id });
    const outsider = subscribe(t.ws(users.outsider), query, { id });
    const member = subscribe(t.ws(users.member), query, { id });
    const requester = subscribe<{ legacyArchiveProgress: { status: string; progress: number } }>(
      t.ws(users.requester),
      query,
      { id },
    );
    await Promise.all([anonymous.ready, outsider.ready, member.ready, requester.ready]);
    await jobs.drain();
    // Progress events come as the stages go; the export is over when one says COMPLETED.
    const deadline = Date.now() + 30_000;
    let events = await requester.waitFor(1, 20_000);
    while (
      !events.some((e) => e.data?.legacyArchiveProgress.status === 'COMPLETED') &&
      !requester.done &&
      Date.now() < deadline
    ) {
      events = await requester.waitFor(events.length + 1, 5_000).catch(() => events);
    }
    for (const [sub, code] of [
      [anonymous, 'UNAUTHENTICATED'],
      [outsider, 'NOT_FOUND'],
      [member, 'NOT_FOUND'],
    ] as const) {
      await sub.waitFor(1, 10_000).catch(() => undefined);
      const first = sub.events[0];
      const error = first?.errors?.[0] ?? (sub.error as { message?: string } | null);
      expect(sub.events.every((e) => !e.data)).toBe(true);
      expect(JSON.stringify(error)).toContain(code);
    }
    const last = events[events.length - 1].data!.legacyArchiveProgress;
    expect(last).toMatchObject({ status: 'COMPLETED', progress: 1 });
    await new Promise((r) => setTimeout(r, 200));
    expect(requester.done).toBe(true);
  });

  it('is no longer the requester’s once they leave the legacy', async () => {
    const leave = await t.gql(
      'mutation($l: ID!) { leaveLegacy(legacyId: $l) }',
      { l: legacyId },
      users.requester,
    );
    expect(leave.errors).toBeUndefined();
    expect(codeOf(await ONE(users.requester))).toBe('NOT_FOUND');
    const res = await fetch(new URL(`/archives/${exportId}/file`, t.url), {
      headers: { authorization: `Bearer ${users.requester.token}` },
    });
    expect(res.status).toBe(404);
    // The upload stays theirs to import: it is of no legacy of this Keepsake.
    expect(codeOf(await IMPORT(users.requester))).toBe('OK');
    await jobs.drain({ timeoutMs: 120_000 });
  });
});
