import { rmSync } from 'node:fs';
import { resolve } from 'node:path';

// A fresh run starts with no template; the first test file that needs a database migrates it.
export default function globalSetup() {
  rmSync(resolve('.test-dbs'), { recursive: true, force: true });
}
