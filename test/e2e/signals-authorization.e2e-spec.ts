import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * Who may read the operators' signals: memoryUplift aggregates every user's replies, so only
 * platform admins. And /metrics does not exist unless METRICS_ENABLED.
 */
type Caller = 'anonymous' | 'member' | 'platform admin';
type Outcome = 'OK' | 'UNAUTHENTICATED' | 'FORBIDDEN';

const UPLIFT = `query($from: DateTime!, $to: DateTime!) {
  memoryUplift(from: $from, to: $to) { withMemory { replies } holdout { replies } }
}`;

const table: { authorizes: 'memoryUplift'; caller: Caller; outcome: Outcome }[] = [
  { authorizes: 'memoryUplift', caller: 'anonymous', outcome: 'UNAUTHENTICATED' },
  { authorizes: 'memoryUplift', caller: 'member', outcome: 'FORBIDDEN' },
  { authorizes: 'memoryUplift', caller: 'platform admin', outcome: 'OK' },
];

describe('Signals authorization', () => {
  let t: TestApp;
  const people = {} as Record<Exclude<Caller, 'anonymous'>, TestUser>;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false', AGENT_REPLY: 'off' });
    people.member = await t.user('signals-member', { email: 'signals-member@example.com' });
    people['platform admin'] = await t.user('signals-platform-admin', {
      email: 'signals-platform-admin@example.com',
      admin: true,
    });
  });
  afterAll(() => t.close());

  it.each(table)('$authorizes as $caller: $outcome', async (row) => {
    const res = await t.gql(
      UPLIFT,
      { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' },
      row.caller === 'anonymous' ? null : people[row.caller],
    );
    if (row.outcome === 'OK') {
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({
        memoryUplift: { withMemory: { replies: 0 }, holdout: { replies: 0 } },
      });
    } else {
      expect(res.data ?? null).toBeNull();
      expect(res.errors![0].extensions).toMatchObject({ code: row.outcome });
    }
  });

  it('/metrics is not found while METRICS_ENABLED is off, token or not', async () => {
    const url = t.url.replace(/\/graphql$/, '/metrics');
    expect((await fetch(url)).status).toBe(404);
    const admin = await fetch(url, {
      headers: { authorization: `Bearer ${people['platform admin'].token}` },
    });
    expect(admin.status).toBe(404);
    expect(await admin.text()).not.toContain('keepsake_');
  });
});
