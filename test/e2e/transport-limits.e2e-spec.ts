import { Client, CloseCode } from 'graphql-ws';
import { GqlResponse, startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * @pass embedded: the limits refuse an operation before any resolver runs; what it reads back
 * from the database only shows that nothing was done.
 */

/** One operation over graphql-ws: its first result, or how the socket closed. */
async function overWs(
  client: Client,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<GqlResponse<unknown> | { closed: number }> {
  return new Promise((resolve) => {
    client.subscribe(
      { query, variables },
      {
        next: (value) => resolve(value as GqlResponse<unknown>),
        error: (err) =>
          resolve(
            Array.isArray(err)
              ? { errors: err as GqlResponse<unknown>['errors'] }
              : { closed: (err as { code: number }).code },
          ),
        complete: () => undefined,
      },
    );
  });
}

/** One operation over HTTP, then over graphql-ws: both answers. */
async function overBoth(
  t: TestApp,
  user: TestUser,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<GqlResponse<unknown>[]> {
  const http = await t.gql(query, variables, user);
  const ws = (await overWs(t.ws(user), query, variables)) as GqlResponse<unknown>;
  return [http, ws];
}

/**
 * Mistakes graphql-js answers by naming parts of the schema the client never wrote: `hidden`
 * are those names, `detail` what graphql-js says when introspection is on.
 */
const MISTAKES: {
  kind: string;
  query: string;
  variables?: Record<string, unknown>;
  code: string;
  /** A variable's mistake: the variable named as the input at fault. */
  field?: string;
  hidden: string[];
  detail: RegExp;
}[] = [
  {
    kind: 'a missing selection',
    query: '{ legacies }',
    code: 'GRAPHQL_VALIDATION_FAILED',
    hidden: ['LegacyConnection', 'Did you mean'],
    detail: /"LegacyConnection!" must have a selection of subfields/,
  },
  {
    kind: 'a missing required argument',
    query: '{ legacy { name } }',
    code: 'GRAPHQL_VALIDATION_FAILED',
    hidden: ['ID!', '"id"'],
    detail: /argument "id" of type "ID!" is required/,
  },
  {
    kind: 'a missing input field in a literal',
    query: 'mutation { createLegacy(input: {}) { name } }',
    code: 'GRAPHQL_VALIDATION_FAILED',
    hidden: ['CreateLegacyInput', 'String!', '"name"'],
    detail: /"CreateLegacyInput.name" of required type "String!" was not provided/,
  },
  {
    kind: 'a missing input field in a variable',
    query: 'mutation($i: CreateLegacyInput!) { createLegacy(input: $i) { id } }',
    variables: { i: {} },
    code: 'BAD_USER_INPUT',
    field: 'i',
    hidden: ['String!', '"name"'],
    detail: /Field "name" of required type "String!" was not provided/,
  },
  {
    kind: 'a field the type does not have',
    query: 'query($l: ID!) { legacy(id: $l) { nikname } }',
    variables: { l: '00000000-0000-4000-8000-000000000000' },
    code: 'GRAPHQL_VALIDATION_FAILED',
    hidden: ['Legacy'],
    detail: /Cannot query field "nikname" on type "Legacy"/,
  },
  {
    kind: 'a variable of the wrong type',
    query: 'query($l: String!) { legacy(id: $l) { id } }',
    variables: { l: 'x' },
    code: 'GRAPHQL_VALIDATION_FAILED',
    hidden: ['ID!'],
    detail: /used in position expecting type "ID!"/,
  },
  {
    kind: 'an unknown argument',
    query: '{ legacies(frist: 1) { nodes { id } } }',
    code: 'GRAPHQL_VALIDATION_FAILED',
    hidden: ['Query', '"first"'],
    detail: /Unknown argument "frist" on field "Query.legacies"/,
  },
  {
    kind: 'a variable outside its enum',
    query:
      'query($v: StoryVisibility!, $l: ID!) { stories(legacyId: $l, filter: { visibility: $v }) { nodes { id } } }',
    variables: { v: 'SHARE', l: '00000000-0000-4000-8000-000000000000' },
    code: 'BAD_USER_INPUT',
    field: 'v',
    hidden: ['SHARED'],
    detail: /Did you mean the enum value "SHARED"\?/,
  },
];

/** What a mistake's error carries: its code, and for a variable the reason and the variable. */
const extensionsOf = (m: { code: string; field?: string }) =>
  m.field ? { code: m.code, reason: 'INVALID_VARIABLE', field: m.field } : { code: m.code };

/**
 * The same limits on every transport: an operation refused over HTTP is refused over graphql-ws,
 * with the same code, and a WebSocket message is held to BODY_LIMIT like an HTTP body.
 */
describe('Operation limits over HTTP and WebSocket', () => {
  let t: TestApp;
  let user: TestUser;
  let legacyId: string;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      GRAPHQL_MAX_COMPLEXITY: '300',
      GRAPHQL_INTROSPECTION: 'false',
      BODY_LIMIT: '64kb',
      GRAPHQL_WS_MAX_SUBSCRIPTIONS: '5',
      GRAPHQL_WS_MAX_CONNECTIONS_PER_USER: '4',
    });
    user = await t.user('limits-user');
    legacyId = (
      await t.gql<{ createLegacy: { id: string } }>(
        'mutation { createLegacy(input: { name: "Ada" }) { id } }',
        {},
        user,
      )
    ).data!.createLegacy.id;
  });
  afterAll(() => t.close());

  const both = (query: string, variables: Record<string, unknown> = {}) =>
    overBoth(t, user, query, variables);

  it('refuses a variable nested 2,500 levels deep (message metadata) before reading it, on both transports', async () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 2500; i++) deep = { a: deep };
    const record = `mutation($c: ID!, $m: JSONObject) {
      recordAssistantMessage(input: { conversationId: $c, content: "hi", metadata: $m }) { id } }`;
    for (const res of await both(record, { c: legacyId, m: deep })) {
      expect(res.data ?? null).toBeNull();
      expect(res.errors).toEqual([
        {
          message: 'The variable "m" nests more than 32 levels of objects and lists.',
          extensions: { code: 'BAD_USER_INPUT', reason: 'VARIABLES_TOO_DEEP', field: 'm' },
        },
      ]);
    }
    // Within the limit, metadata is read as before (here: no such conversation).
    let fine: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) fine = { a: fine };
    for (const res of await both(record, { c: legacyId, m: fine })) {
      expect(res.errors![0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('bounds the operations one graphql-ws connection holds open', async () => {
    const client = t.ws(user);
    const errors: unknown[] = [];
    const open = (label: string) =>
      client.subscribe(
        { query: 'subscription { memoryChanged { action } }' },
        { next: () => undefined, error: (e) => errors.push([label, e]), complete: () => undefined },
      );
    const stops = Array.from({ length: 5 }, (_, i) => open(`s${i}`));
    await new Promise((r) => setTimeout(r, 300));
    expect(errors).toEqual([]);
    // The sixth is refused, and says why; the five go on.
    // Without a bound it would simply be accepted, and wait for events.
    const sixth = (await Promise.race([
      overWs(client, 'subscription { memoryChanged { action } }'),
      new Promise((resolve) => setTimeout(() => resolve({ accepted: true }), 2000)),
    ])) as GqlResponse;
    expect(sixth.errors).toEqual([
      {
        message: 'This connection holds 5 operations open already: complete one first.',
        extensions: { code: 'BAD_USER_INPUT', reason: 'TOO_MANY_SUBSCRIPTIONS', field: 'query' },
      },
    ]);
    // A query needs room too; another connection has its own.
    expect(((await overWs(client, '{ me { id } }')) as GqlResponse).errors).toHaveLength(1);
    expect(await overWs(t.ws(user), '{ me { id } }')).toMatchObject({ data: { me: {} } });
    // Once one is completed, there is room again.
    stops[0]();
    await new Promise((r) => setTimeout(r, 200));
    expect(await overWs(client, '{ me { id } }')).toMatchObject({ data: { me: {} } });
    expect(errors).toEqual([]);
    for (const stop of stops.slice(1)) stop();
  });

  it('counts only accepted operations: a burst of subscribes gets exactly the limit', async () => {
    const burst = await t.user('limits-burst');
    const client = t.ws(burst);
    const refused: unknown[] = [];
    const heard: number[] = [];
    // Eight subscribes in one burst on one socket: all eight ids are pending at once.
    const stops = Array.from({ length: 8 }, (_, i) =>
      client.subscribe(
        { query: 'subscription { memoryChanged { action } }' },
        {
          next: () => heard.push(i),
          error: (e) => refused.push(e),
          complete: () => undefined,
        },
      ),
    );
    const deadline = Date.now() + 5000;
    while (refused.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(refused).toHaveLength(3);
    for (const errors of refused) {
      expect(errors).toEqual([
        {
          message: 'This connection holds 5 operations open already: complete one first.',
          extensions: { code: 'BAD_USER_INPUT', reason: 'TOO_MANY_SUBSCRIPTIONS', field: 'query' },
        },
      ]);
    }
    // The five others are open: each hears the next change.
    await t.gql(
      'mutation { rememberThis(input: { content: "I collect stamps." }) { outcome } }',
      {},
      burst,
    );
    while (heard.length < 5 && Date.now() < deadline + 5000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(heard).toHaveLength(5);
    expect(refused).toHaveLength(3);
    for (const stop of stops) stop();
  });

  it('caps the WebSockets one user holds, with a close of its own; others are not affected', async () => {
    const capped = await t.user('limits-capped');
    const clients = Array.from({ length: 4 }, () => t.ws(capped));
    // Four sockets, each holding a subscription, each answered (so each was let in).
    for (const client of clients) {
      client.subscribe(
        { query: 'subscription { memoryChanged { action } }' },
        { next: () => undefined, error: () => undefined, complete: () => undefined },
      );
      expect(await overWs(client, '{ me { id } }')).toMatchObject({ data: { me: {} } });
    }
    const closedWith = (client: Client) =>
      new Promise<{ code: number; reason: string }>((resolve) =>
        client.subscribe(
          { query: '{ me { id } }' },
          {
            next: () => resolve({ code: 0, reason: 'answered' }),
            error: (e) => resolve(e as { code: number; reason: string }),
            complete: () => undefined,
          },
        ),
      );
    const fifth = await closedWith(t.ws(capped));
    expect({ code: fifth.code, reason: fifth.reason }).toEqual({
      code: 4029,
      reason: 'Too many connections for this user: close one first.',
    });
    expect(fifth.code).not.toBe(CloseCode.Forbidden);
    // Another user is not counted with them.
    expect(await overWs(t.ws(user), '{ me { id } }')).toMatchObject({ data: { me: {} } });
    // Once one of the four closes, there is room again.
    await clients[0].dispose();
    const deadline = Date.now() + 5000;
    let next = await closedWith(t.ws(capped));
    while (next.code === 4029 && Date.now() < deadline) next = await closedWith(t.ws(capped));
    expect(next).toEqual({ code: 0, reason: 'answered' });
    await Promise.all(clients.slice(1).map((c) => c.dispose()));
  });

  it('refuses a request of two mutation fields before doing either, on both transports', async () => {
    const count = async () =>
      (
        await t.gql<{ legacies: { edges: unknown[] } }>(
          '{ legacies(first: 20) { edges { node { id } } } }',
          {},
          user,
        )
      ).data!.legacies.edges.length;
    const before = await count();
    // The second would fail (a blank name) after the first was done: `data` would be null and
    // the first legacy's id lost. Refused as a whole, nothing is done.
    const two = `mutation {
      a: createLegacy(input: { name: "Kept" }) { id }
      b: createLegacy(input: { name: "   " }) { id } }`;
    for (const res of await both(two)) {
      expect(res.data ?? null).toBeNull();
      expect(res.errors).toEqual([
        {
          message:
            'Send one mutation field per request: each is then done, or not, and answered on its own.',
          extensions: {
            code: 'BAD_USER_INPUT',
            reason: 'ONE_MUTATION_PER_REQUEST',
            field: 'query',
          },
        },
      ]);
    }
    expect(await count()).toBe(before);
    // Through a fragment too; one field (with __typename beside it) is fine.
    const fragment = `mutation { ...Two } fragment Two on Mutation {
      a: createLegacy(input: { name: "A" }) { id } b: createLegacy(input: { name: "B" }) { id } }`;
    expect((await t.gql(fragment, {}, user)).errors![0].extensions).toMatchObject({
      reason: 'ONE_MUTATION_PER_REQUEST',
    });
    const one = await t.gql(
      'mutation { __typename createLegacy(input: { name: "One" }) { id } }',
      {},
      user,
    );
    expect(one.errors).toBeUndefined();
    expect(await count()).toBe(before + 1);
  });

  it('refuses 40 aliased recalls, on both transports', async () => {
    const aliases = Array.from(
      { length: 40 },
      (_, i) => `r${i}: recall(legacyId: $l, query: "boats ${i}") { edges { node { id } } }`,
    ).join(' ');
    for (const res of await both(`query($l: ID!) { ${aliases} }`, { l: legacyId })) {
      expect(res.errors![0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        reason: 'TOO_MANY_EXPENSIVE_FIELDS',
      });
      expect(res.data ?? null).toBeNull();
    }
  });

  it('counts a connection at its default page size when no first is given', async () => {
    // 20 legacies a page by default, each with ten fields under it: over 300.
    const fields = 'id name createdAt persona viewerRole';
    const query = `{ a: legacies { nodes { ${fields} } } b: legacies { nodes { ${fields} } } c: legacies { nodes { ${fields} } } }`;
    for (const res of await both(query)) {
      expect(res.errors![0].extensions).toMatchObject({ reason: 'QUERY_TOO_COMPLEX' });
    }
    // The same with a small page passes.
    const small = `{ legacies(first: 2) { nodes { ${fields} } } }`;
    for (const res of await both(small)) expect(res.errors).toBeUndefined();
  });

  it('refuses a query deeper than GRAPHQL_MAX_DEPTH over WebSocket too', async () => {
    let deep = 'id';
    for (let i = 0; i < 12; i++) deep = `supersededBy { ${deep} }`;
    const query = `query($l: ID!) { facts(legacyId: $l, first: 1) { nodes { ${deep} } } }`;
    for (const res of await both(query, { l: legacyId })) {
      expect(res.errors![0].extensions).toMatchObject({ code: expect.any(String) });
      expect(res.errors![0].message).toMatch(/levels deep/);
    }
  });

  it('refuses introspection over WebSocket when it is off', async () => {
    const ws = (await overWs(
      t.ws(user),
      '{ __schema { types { name } } }',
    )) as GqlResponse<unknown>;
    expect(ws.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(ws.data ?? null).toBeNull();
    const http = await t.gql('{ __schema { types { name } } }', {}, user);
    expect(http.errors).toBeDefined();
  });

  it('suggests no names of the schema when introspection is off, on both transports', async () => {
    const guesses: [string, Record<string, unknown>][] = [
      ['{ legacie { id } }', {}],
      ['{ legacies(frist: 1) { nodes { id } } }', {}],
      ['{ me { displayNam } }', {}],
      [
        'query($v: StoryVisibility!, $l: ID!) { stories(legacyId: $l, filter: { visibility: $v }) { nodes { id } } }',
        { v: 'SHARE', l: legacyId },
      ],
      [
        'query($l: ID!) { stories(legacyId: $l, filter: { visibilty: SHARED }) { nodes { id } } }',
        { l: legacyId },
      ],
    ];
    for (const [query, variables] of guesses) {
      for (const res of await both(query, variables)) {
        expect(res.errors!.length).toBeGreaterThan(0);
        for (const error of res.errors!) {
          expect(error.message).not.toMatch(/did you mean/i);
          expect(error.extensions?.code).toEqual(expect.any(String));
        }
      }
    }
  });

  it.each(MISTAKES)(
    'answers $kind with its code and no name of the schema, on both transports',
    async (mistake) => {
      const { query, variables, code, hidden } = mistake;
      for (const res of await both(query, variables)) {
        expect(res.data ?? null).toBeNull();
        expect(res.errors!.length).toBeGreaterThan(0);
        for (const error of res.errors!) {
          expect(error.extensions).toEqual(extensionsOf(mistake));
          for (const name of hidden) expect(error.message).not.toContain(name);
          // Where in the client's own document: nothing of the schema.
          if (code === 'GRAPHQL_VALIDATION_FAILED') {
            const locations = (error as { locations?: unknown[] }).locations ?? [];
            expect(locations.length).toBeGreaterThan(0);
            for (const location of locations) {
              expect(location).toEqual({ line: expect.any(Number), column: expect.any(Number) });
            }
          }
        }
      }
    },
  );

  it('closes a WebSocket whose message is larger than BODY_LIMIT', async () => {
    const huge = `query { me { id } } # ${'x'.repeat(100 * 1024)}`;
    const res = await overWs(t.ws(user), huge);
    expect(res).toEqual({ closed: 1009 });
  });
});

/** In development (introspection on) the same mistakes keep graphql-js's detailed messages. */
describe('Request errors with introspection on', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp({
      JOBS_WORKER: 'false',
      JOBS_SCHEDULER: 'false',
      AGENT_REPLY: 'off',
      GRAPHQL_INTROSPECTION: 'true',
    });
    user = await t.user('detailed-errors-user');
  });
  afterAll(() => t.close());

  it.each(MISTAKES)(
    "answers $kind with graphql-js's message, on both transports",
    async (mistake) => {
      const { query, variables, detail } = mistake;
      for (const res of await overBoth(t, user, query, variables)) {
        expect(res.errors![0].extensions).toEqual(extensionsOf(mistake));
        expect(res.errors![0].message).toMatch(detail);
      }
    },
  );
});
