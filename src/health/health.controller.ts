import { Controller, Get, HttpCode, Logger, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';

@Controller('health')
export class HealthController {
  private readonly logger = new Logger('Health');

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** The process is up. */
  @Get('live')
  @HttpCode(200)
  live() {
    return { status: 'ok' };
  }

  /** The database answers within HEALTH_DB_TIMEOUT_MS. */
  @Get('ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    const timeoutMs = this.config.env.HEALTH_DB_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const started = Date.now();
    try {
      await Promise.race([
        this.dataSource.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
      return { status: 'ok', database: { status: 'up', latencyMs: Date.now() - started } };
    } catch (err) {
      // The reason goes to the log: a database error names hosts, roles and tables.
      this.logger.warn({ msg: 'readiness check failed', error: (err as Error).message });
      res.status(503);
      return { status: 'unavailable', database: { status: 'down' } };
    } finally {
      clearTimeout(timer);
    }
  }
}
