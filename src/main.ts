import 'reflect-metadata';
import { AppConfig, ConfigValidationError } from './config/app-config.js';
import { loadAppConfig } from './app.config.js';
import { createApp } from './bootstrap.js';
import { keepNewFilesPrivate } from './common/files/private-files.js';

async function main(): Promise<void> {
  // First: whatever the service writes is its user's alone, whatever umask it was started with.
  keepNewFilesPrivate();
  let config: AppConfig;
  try {
    config = loadAppConfig();
  } catch (err) {
    if (err instanceof ConfigValidationError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const app = await createApp(config);
  const server = await app.listen(config.env.PORT, config.env.HOST);
  server.keepAliveTimeout = 5_000;
  // A graceful stop waits for in-flight requests, but not for a client that stalls forever.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), config.env.SHUTDOWN_TIMEOUT_MS).unref();
    });
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.env.PORT;
  app.get(AppConfig);
  process.stdout.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: 'Keepsake is listening', url: `http://localhost:${port}/graphql`, database: config.embedded ? `embedded (${config.env.DATA_DIR})` : 'DATABASE_URL' })}\n`,
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
