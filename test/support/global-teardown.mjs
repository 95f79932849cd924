import { rmSync } from 'node:fs';

export default function globalTeardown() {
  const root = process.env.KEEPSAKE_TEST_DB_ROOT;
  if (root) rmSync(root, { recursive: true, force: true });
}
