import { Client, fetchExchange, gql } from '@urql/core';
import { serverAudits } from 'graphql-http';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * GraphQL over HTTP as clients nobody here wrote see it: graphql-http's audits of the spec, and
 * urql's default of sending queries as GET, which Apollo's CSRF prevention refuses unless the
 * request carries a header a browser would preflight (docs/api.md, "GET requests").
 *
 * @pass embedded: the protocol is answered before any resolver reads the database.
 */

/** The audit's SHOULDs Keepsake answers otherwise, on purpose (docs/api.md, "GET requests"). */
const ACCEPTED_WARNINGS = [
  // A request error is answered with its 4xx status in application/json too, as in
  // application/graphql-response+json: its clients learn of a refusal from the status.
  '572B', // 200 on a parse failure
  'FDE2', // 200 on a validation failure
  '7B9B', // 200 on a variable coercion failure
];

/** The MAYs GET without a preflighted header cannot meet: CSRF prevention refuses it. */
const GET_WITHOUT_PREFLIGHT = ['5A70', 'D6D5', '6A70'];

async function audit(url: string, headers: Record<string, string> = {}) {
  const fetchFn = (input: string | URL | Request, init: RequestInit = {}) =>
    fetch(input, {
      ...init,
      headers: { ...Object.fromEntries(new Headers(init.headers ?? {})), ...headers },
    });
  const outcome: Record<'error' | 'warn' | 'notice', string[]> = {
    error: [],
    warn: [],
    notice: [],
  };
  for (const { id, name, fn } of serverAudits({ url, fetchFn })) {
    const result = await fn();
    if (result.status !== 'ok') outcome[result.status].push(`${id} ${name}: ${result.reason}`);
  }
  const ids = (list: string[]) => list.map((line) => line.slice(0, 4)).sort();
  return {
    outcome,
    ids: { error: ids(outcome.error), warn: ids(outcome.warn), notice: ids(outcome.notice) },
  };
}

describe('GraphQL over HTTP', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    user = await t.user('http-audit-user', { name: 'Ada' });
  });
  afterAll(() => t?.close());

  it("passes graphql-http's audits: every MUST, and no SHOULD but the three it answers otherwise", async () => {
    const plain = await audit(t.url);
    expect(plain.outcome.error).toEqual([]);
    expect(plain.ids.warn).toEqual([...ACCEPTED_WARNINGS].sort());
    expect(plain.ids.notice).toEqual([...GET_WITHOUT_PREFLIGHT].sort());
    // With the header docs/api.md gives for GET, GET is served like POST.
    const preflighted = await audit(t.url, { 'apollo-require-preflight': 'true' });
    expect(preflighted.outcome.error).toEqual([]);
    expect(preflighted.ids.warn).toEqual([...ACCEPTED_WARNINGS].sort());
    expect(preflighted.ids.notice).toEqual([]);
  }, 120_000);

  it("answers urql's default GET only with a preflighted header, as docs/api.md says", async () => {
    const ME = gql`
      query Me {
        me {
          displayName
        }
      }
    `;
    const auth = { authorization: `Bearer ${user.token}` };
    // urql's default: queries as GET (within the URL's length), no extra header.
    const byDefault = new Client({
      url: t.url,
      exchanges: [fetchExchange],
      fetchOptions: { headers: auth },
    });
    const refused = await byDefault.query(ME, {}).toPromise();
    expect(refused.data).toBeUndefined();
    expect(refused.error?.message).toMatch(/CSRF|preflight/i);
    // Either answer of docs/api.md: the header that forces a preflight, or POST.
    for (const client of [
      new Client({
        url: t.url,
        exchanges: [fetchExchange],
        fetchOptions: { headers: { ...auth, 'apollo-require-preflight': 'true' } },
      }),
      new Client({
        url: t.url,
        exchanges: [fetchExchange],
        preferGetMethod: false,
        fetchOptions: { headers: auth },
      }),
    ]) {
      const res = await client.query(ME, {}).toPromise();
      expect(res.error).toBeUndefined();
      expect(res.data).toEqual({ me: { displayName: 'Ada' } });
    }
    // A mutation is never taken over GET.
    const get = await fetch(
      `${t.url}?query=${encodeURIComponent('mutation { updateMe(input: {}) { id } }')}`,
      { headers: { ...auth, 'apollo-require-preflight': 'true' } },
    );
    expect(get.status).toBe(405);
  });
});
