// The embedded pass of `npm run test:all` (test/jest.all.config.js): it runs beside the server
// pass in one Jest run that has TEST_DATABASE_URL set, so its files must not see the server.
delete process.env.TEST_DATABASE_URL;
