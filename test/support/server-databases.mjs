import pg from 'pg';

/**
 * Drops the test databases (`ks_<run pid>_…`, see test-database.ts) on the TEST_DATABASE_URL
 * server whose run `which(pid)` selects. Nothing to do without a server.
 */
export async function dropRunDatabases(which) {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT datname FROM pg_database WHERE datname ~ '^ks_[0-9]+_' ORDER BY datname`,
    );
    for (const { datname } of rows) {
      const pid = Number(/^ks_(\d+)_/.exec(datname)[1]);
      // The template last: its copies go first.
      if (which(pid)) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  } finally {
    await client.end();
  }
}
