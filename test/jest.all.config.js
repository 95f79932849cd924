import base from '../jest.config.js';
import { exactly, onePassFiles, SERVER_PASS_DIRS } from './support/passes.mjs';

/**
 * Both database passes of `npm run test:all` in one Jest run, so that one pool of workers takes
 * the slowest files of either first and no core waits for the other pass to finish: `embedded`
 * runs every file on embedded databases, `server` runs test/integration and test/e2e again on the
 * PostgreSQL server of TEST_DATABASE_URL (test/support/with-postgres.sh). A file that belongs in
 * one pass only says so with `@pass` (test/support/passes.mjs).
 */
const rootDir = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const marked = onePassFiles(rootDir);
const only = (pass) => marked.filter((m) => m.pass !== pass).map((m) => exactly(rootDir, m.file));

const { maxWorkers: _maxWorkers, globalSetup, globalTeardown, testTimeout, ...project } = base;

export default {
  rootDir,
  testTimeout,
  // Many files wait (on jobs, sockets, a browser, the server) as much as they compute: more
  // workers than cores keeps both cores busy. KEEPSAKE_TEST_WORKERS overrides it.
  maxWorkers: Number(process.env.KEEPSAKE_TEST_WORKERS ?? 3),
  // Each file loads the whole service again into its worker, whose heap grows file after file
  // (its workers reached 2 to 3.7 GB over a pass): one whose heap grows past this is replaced
  // between files (a new worker costs about a second).
  workerIdleMemoryLimit: '1024MB',
  reporters: ['default', '<rootDir>/test/support/pass-reporter.mjs'],
  // The longest files of both passes first (test/support/sequencer.mjs).
  testSequencer: '<rootDir>/test/support/sequencer.mjs',
  projects: [
    {
      ...project,
      rootDir,
      displayName: 'embedded',
      testEnvironment: '<rootDir>/test/support/cpu-environment.mjs',
      globalSetup,
      globalTeardown,
      testTimeout,
      setupFiles: ['<rootDir>/test/support/embedded-pass.mjs'],
      testPathIgnorePatterns: ['/node_modules/', ...only('embedded')],
    },
    {
      ...project,
      rootDir,
      displayName: 'server',
      testEnvironment: '<rootDir>/test/support/cpu-environment.mjs',
      globalSetup,
      globalTeardown,
      testTimeout,
      roots: SERVER_PASS_DIRS.map((d) => `<rootDir>/${d}`),
      setupFiles: ['<rootDir>/test/support/server-pass.mjs'],
      testPathIgnorePatterns: ['/node_modules/', ...only('server')],
    },
  ],
};
