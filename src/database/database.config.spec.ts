import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeDatabase, postgresUrl } from './database.config.js';
import { isTransientConnectError } from './database.module.js';

describe('DATABASE_URL', () => {
  const rootCert = join(mkdtempSync(join(tmpdir(), 'ks-ssl-')), 'root.crt');
  writeFileSync(rootCert, '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');

  it.each([
    'postgres://u:p@db.example.com:5432/keepsake',
    'postgresql://postgres@/keepsake?host=/run/postgresql',
    'postgresql:///keepsake?host=/var/run/postgresql&port=5433',
    'postgresql://postgres@%2Frun%2Fpostgresql/keepsake',
    `postgresql://db/keepsake?sslmode=verify-full&sslrootcert=${rootCert}`,
    'postgresql://[::1]:5433/keepsake',
    'postgresql://',
  ])('accepts what libpq accepts: %s', (url) => {
    expect(postgresUrl(url)).toBe(url);
  });

  it.each(['mysql://x', 'keepsake', 'http://db/keepsake', '/run/postgresql'])(
    'refuses %s',
    (url) => {
      expect(() => postgresUrl(url)).toThrow('must be a postgres:// URL');
    },
  );

  it('refuses at boot an sslrootcert that cannot be read', () => {
    expect(() => postgresUrl('postgresql://db/k?sslrootcert=/nonexistent/root.crt')).toThrow(
      /ENOENT/,
    );
  });

  it('names where it points without the password', () => {
    expect(describeDatabase('postgres://u:hunter2@db:5433/keepsake')).toBe('db:5433/keepsake');
    expect(describeDatabase('postgresql://u@/keepsake?host=/run/postgresql')).toBe(
      'socket /run/postgresql/keepsake',
    );
  });
});

describe('connection errors at boot', () => {
  it('retries a server that is not there yet, starting, or full', () => {
    for (const code of ['ECONNREFUSED', 'ENOENT', 'ENOTFOUND', 'EAI_AGAIN', '57P03', '53300']) {
      expect(isTransientConnectError(Object.assign(new Error('x'), { code }))).toBe(true);
    }
    expect(
      isTransientConnectError(new Error('Connection terminated due to connection timeout')),
    ).toBe(true);
    const both = new AggregateError([
      Object.assign(new Error('a'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('b'), { code: 'ECONNREFUSED' }),
    ]);
    expect(isTransientConnectError(both)).toBe(true);
  });

  it('fails at once on what waiting cannot fix', () => {
    // Wrong password, missing database, missing role.
    for (const code of ['28P01', '3D000', '28000']) {
      expect(isTransientConnectError(Object.assign(new Error('x'), { code }))).toBe(false);
    }
    expect(isTransientConnectError(new Error('self-signed certificate'))).toBe(false);
  });
});
