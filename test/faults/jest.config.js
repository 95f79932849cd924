import base from '../../jest.config.js';

/**
 * The fault suite (npm run test:faults): the service as a process, killed, starved of its
 * database and of disk, on whichever database TEST_DATABASE_URL names (embedded without it).
 * One file at a time: each runs its own service under load, and timings are what they test.
 */
export default {
  ...base,
  rootDir: '../..',
  testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'],
  testTimeout: 1_800_000,
  maxWorkers: 1,
  globalSetup: '<rootDir>/test/faults/global-setup.mjs',
  // Each file's CPU time in the run's report (the services it starts and ends included).
  testEnvironment: '<rootDir>/test/support/cpu-environment.mjs',
  reporters: ['default', '<rootDir>/test/support/pass-reporter.mjs'],
};
