import { randomUUID } from 'node:crypto';
import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GraphQLModule } from '@nestjs/graphql';
import { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import type { WebSocketServer } from 'ws';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/app-config.js';
import { corsOptions } from './console/cors.js';
import { createValidationPipe } from './common/validation/validation.pipe.js';
import { refuseOversizedDocuments } from './graphql/source-limits.middleware.js';
import { JsonLogger } from './logging/json-logger.js';
import { requestStorage } from './logging/request-context.storage.js';
import { asRequest } from './database/database-queue.js';
import {
  keepNewFilesPrivate,
  securePrivateDir,
  tighteningNotice,
} from './common/files/private-files.js';

/** Creates the application (not yet listening); shared by main.ts and the end-to-end tests. */
export async function createApp(config: AppConfig): Promise<INestApplication> {
  const logger = new JsonLogger(config.env.LOG_LEVEL);
  // Before anything is written: the family's files are the service user's alone (archives,
  // uploads, the embedded database, the generated secret), on a server too.
  keepNewFilesPrivate();
  const notice = tighteningNotice(securePrivateDir(config.env.DATA_DIR));
  if (notice) logger.warn(notice, 'DataDir');
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    logger,
    bodyParser: false,
    abortOnError: false,
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    // Its place in the embedded database's queue: when it came in.
    const since = performance.now();
    const incoming = req.header('x-request-id');
    const requestId = incoming && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    requestStorage.run({ requestId }, () => asRequest(next, since));
  });
  // X-Forwarded-* from the proxies TRUST_PROXY names only (req.secure, req.ip).
  app.set('trust proxy', config.env.TRUST_PROXY);
  app.enableCors(corsOptions(config.env.CORS_ORIGINS ?? []));
  app.useBodyParser('json', { limit: config.env.BODY_LIMIT });
  app.use('/graphql', refuseOversizedDocuments);
  app.useGlobalPipes(createValidationPipe());
  // Exit with status 0 once the hooks have run, rather than re-raising the signal.
  app.enableShutdownHooks([], { useProcessExit: true });
  await app.init();
  limitWebSocketMessages(app, config.env.BODY_LIMIT);
  return app;
}

/**
 * WebSocket messages are held to BODY_LIMIT like HTTP bodies: a larger one closes the socket
 * (1009) before it is buffered. Nest creates the graphql-ws server without the option, so it is
 * set on that server once the application is initialised (the e2e tests check it holds).
 */
function limitWebSocketMessages(app: INestApplication, maxPayload: number): void {
  const adapter = app.get(GraphQLModule, { strict: false }).graphQlAdapter as unknown as {
    _subscriptionService?: { wss?: WebSocketServer };
  };
  const wss = adapter._subscriptionService?.wss;
  if (!wss)
    throw new Error('The graphql-ws server was not found: its message limit cannot be set.');
  wss.options.maxPayload = maxPayload;
}
