import { rmSync } from 'node:fs';
import { resolve } from 'node:path';

export default function globalTeardown() {
  rmSync(resolve('.test-dbs'), { recursive: true, force: true });
}
