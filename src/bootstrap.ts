import { randomUUID } from 'node:crypto';
import 'reflect-metadata';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/app-config.js';
import { createValidationPipe } from './common/validation/validation.pipe.js';
import { JsonLogger } from './logging/json-logger.js';
import { requestStorage } from './logging/request-context.storage.js';

/** Creates the application (not yet listening); shared by main.ts and the end-to-end tests. */
export async function createApp(config: AppConfig): Promise<INestApplication> {
  const logger = new JsonLogger(config.env.LOG_LEVEL);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    logger,
    bodyParser: false,
    abortOnError: false,
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.header('x-request-id');
    const requestId = incoming && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    requestStorage.run({ requestId }, next);
  });
  app.useBodyParser('json', { limit: config.env.BODY_LIMIT });
  app.useGlobalPipes(createValidationPipe());
  // Exit with status 0 once the hooks have run, rather than re-raising the signal.
  app.enableShutdownHooks([], { useProcessExit: true });
  return app;
}
