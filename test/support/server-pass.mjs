// The server pass of `npm run test:all` (test/jest.all.config.js): the same files on the real
// PostgreSQL server that test/support/with-postgres.sh started.
if (!process.env.TEST_DATABASE_URL) {
  throw new Error(
    'The server pass needs TEST_DATABASE_URL: run it through test/support/with-postgres.sh.',
  );
}
