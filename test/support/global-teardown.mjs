import { rmSync } from 'node:fs';
import { dropRunDatabases } from './server-databases.mjs';

export default async function globalTeardown() {
  const root = process.env.KEEPSAKE_TEST_DB_ROOT;
  if (root) rmSync(root, { recursive: true, force: true });
  await dropRunDatabases((pid) => pid === process.pid);
}
