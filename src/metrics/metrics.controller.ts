import { timingSafeEqual } from 'node:crypto';
import {
  Controller,
  Get,
  Headers,
  NotFoundException,
  Res,
  UnauthorizedException,
} from '@nestjs/common';
import type { Response } from 'express';
import { AppConfig } from '../config/app-config.js';
import { ServiceMetrics } from './service-metrics.js';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * GET /metrics in the Prometheus text format. Off (404, as if it did not exist) unless
 * METRICS_ENABLED; with METRICS_TOKEN, only for `Authorization: Bearer <token>`.
 */
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: ServiceMetrics,
    private readonly config: AppConfig,
  ) {}

  @Get()
  async scrape(
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<string> {
    const env = this.config.env;
    if (!env.METRICS_ENABLED) throw new NotFoundException();
    if (env.METRICS_TOKEN) {
      const token = /^\s*Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
      if (!sameSecret(token, env.METRICS_TOKEN)) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
        throw new UnauthorizedException();
      }
    }
    res.setHeader('Content-Type', this.metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    return this.metrics.scrape();
  }
}
