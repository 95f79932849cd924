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
import { presentsMetricsToken } from './metrics-token.js';
import { ServiceMetrics } from './service-metrics.js';

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
      if (!presentsMetricsToken(authorization, env.METRICS_TOKEN)) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
        throw new UnauthorizedException();
      }
    }
    res.setHeader('Content-Type', this.metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    return this.metrics.scrape();
  }
}
