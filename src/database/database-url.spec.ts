import { loadAppConfig } from '../app.config.js';
import { serverList, urlList } from './database-url.js';
import { formatLsn, parseLsn, PositionHistory } from './wal-position.js';

describe('serverList (libpq multi-host URLs)', () => {
  it('splits several hosts into one URL each, keeping user, database and parameters', () => {
    const list = serverList(
      'postgres://ks:pw@db1:5432,db2:5433/keepsake?sslmode=require&target_session_attrs=read-write',
    );
    expect(list.attrs).toBe('read-write');
    expect(list.servers).toEqual([
      { host: 'db1', port: '5432', url: 'postgres://ks:pw@db1:5432/keepsake?sslmode=require' },
      { host: 'db2', port: '5433', url: 'postgres://ks:pw@db2:5433/keepsake?sslmode=require' },
    ]);
  });

  it('reads IPv6 hosts in brackets and hosts given in ?host= with their ports', () => {
    expect(serverList('postgres://u@[::1]:5432,[fe80::2]/db').servers.map((s) => s.url)).toEqual([
      'postgres://u@[::1]:5432/db',
      'postgres://u@[fe80::2]/db',
    ]);
    expect(
      serverList('postgres://u@/db?host=h1,h2&port=1,2').servers.map((s) => [s.host, s.port]),
    ).toEqual([
      ['h1', '1'],
      ['h2', '2'],
    ]);
  });

  it('takes several hosts without target_session_attrs as read-write, one host as any', () => {
    expect(serverList('postgres://u@a,b/db').attrs).toBe('read-write');
    expect(serverList('postgres://u@a/db').attrs).toBe('any');
    expect(serverList('postgres://u@a/db').servers).toHaveLength(1);
  });

  it('refuses what libpq would, and the attributes a writing service cannot use', () => {
    expect(() => serverList('postgres://u@a,b/db?target_session_attrs=standby')).toThrow(
      /not supported/,
    );
    expect(() => serverList('postgres://u@/db?host=a,b&port=1,2,3')).toThrow(/3 ports/);
    expect(() => serverList('mysql://u@a/db')).toThrow(/postgres/);
  });
});

describe('urlList (DATABASE_REPLICA_URLS)', () => {
  it('splits at commas or spaces before each URL, never inside one', () => {
    expect(urlList('postgres://a:1/db, postgres://b:2/db postgresql://c/db')).toEqual([
      'postgres://a:1/db',
      'postgres://b:2/db',
      'postgresql://c/db',
    ]);
    expect(urlList('postgres://u@h1,h2/db')).toEqual(['postgres://u@h1,h2/db']);
  });
});

describe('WAL positions', () => {
  it('reads and writes pg_lsn text', () => {
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(formatLsn(parseLsn('16/B374D848')!)).toBe('16/B374D848');
    expect(parseLsn(null)).toBeNull();
    expect(() => parseLsn('nope')).toThrow(/WAL position/);
  });

  it('measures lag as how long ago the primary first wrote past the replayed position', () => {
    const h = new PositionHistory(10_000);
    h.add(100n, 1_000);
    h.add(100n, 1_500); // nothing new: the first time it got there is kept
    h.add(200n, 2_000);
    h.add(300n, 3_000);
    expect(h.latest).toBe(300n);
    expect(h.lagMs(300n, 3_500)).toBe(0);
    expect(h.lagMs(250n, 3_500)).toBe(500);
    expect(h.lagMs(100n, 3_500)).toBe(1_500);
    expect(h.lagMs(50n, 3_500)).toBe(2_500);
    // A position behind the newest: another server is the primary now; start again.
    h.add(10n, 4_000);
    expect(h.latest).toBe(10n);
    expect(h.lagMs(5n, 4_500)).toBe(500);
  });
});

describe('the replica and listener variables, validated at boot', () => {
  it('refuses replicas or a listener without DATABASE_URL, and a replica URL with several hosts', () => {
    expect(() => loadAppConfig({ DATABASE_REPLICA_URLS: 'postgres://r/db' })).toThrow(
      /DATABASE_REPLICA_URLS needs DATABASE_URL/,
    );
    expect(() => loadAppConfig({ DATABASE_LISTEN_URL: 'postgres://p/db' })).toThrow(
      /DATABASE_LISTEN_URL needs DATABASE_URL/,
    );
    expect(() =>
      loadAppConfig({
        DATABASE_URL: 'postgres://p/db',
        JWT_SECRET: 'x'.repeat(32),
        DATABASE_REPLICA_URLS: 'postgres://r1,r2/db',
      }),
    ).toThrow(/several hosts/);
    const config = loadAppConfig({
      DATABASE_URL: 'postgres://p1,p2/db?target_session_attrs=read-write',
      JWT_SECRET: 'x'.repeat(32),
      DATABASE_REPLICA_URLS: 'postgres://r1/db,postgres://r2/db',
    });
    expect(config.env.DATABASE_REPLICA_URLS).toEqual(['postgres://r1/db', 'postgres://r2/db']);
    expect(config.env.DATABASE_REPLICA_MAX_LAG_MS).toBe(500);
  });
});
