import { Controller, Get, Headers, HttpCode, Inject, Logger, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { StorageGuard } from '../database/storage-guard.service.js';
import { BackupsService } from '../backups/backups.service.js';
import { EMBEDDER } from '../llm/embedder.js';
import type { Embedder } from '../llm/embedder.js';
import { EmbeddedLanguageModel } from '../llm/embedded-llm.provider.js';
import { LANGUAGE_MODEL } from '../llm/language-model.js';
import type { LanguageModel } from '../llm/language-model.js';
import { presentsMetricsToken } from '../metrics/metrics-token.js';

@Controller('health')
export class HealthController {
  private readonly logger = new Logger('Health');

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    private readonly storage: StorageGuard,
    private readonly backups: BackupsService,
    @Inject(LANGUAGE_MODEL) private readonly llm: LanguageModel,
  ) {}

  /**
   * The embedded database's scheduled backups: when the newest good one was made and how old it
   * is (null before the first). A server is backed up with its own tools, which it reports.
   */
  private async backupState() {
    if (!this.config.embedded) return {};
    const schedule = this.config.env.BACKUP_SCHEDULE;
    const last = await this.backups.lastGood();
    return {
      backup: {
        schedule,
        lastGoodAt: last?.at.toISOString() ?? null,
        ageSeconds: last ? Math.max(0, Math.round((Date.now() - last.at.getTime()) / 1000)) : null,
      },
    };
  }

  /** Whether writes are taken (the embedded database refuses them on a nearly full disk). */
  private storageState() {
    const { full, freeBytes } = this.storage.current;
    return { status: full ? 'full' : 'ok', ...(freeBytes !== null ? { freeBytes } : {}) };
  }

  /**
   * The language model in use; an embedded one also says, once loaded, its context, threads
   * and the memory it holds.
   */
  private languageModel() {
    const info = this.llm instanceof EmbeddedLanguageModel ? this.llm.info : null;
    return {
      model: this.llm.modelId,
      generates: this.llm.generates,
      ...(info
        ? {
            contextSize: info.contextSize,
            threads: info.threads,
            memoryMb: Math.round(info.memoryBytes / 1e6),
          }
        : {}),
    };
  }

  /** The encoder in use, and why it is not the configured one when a fetched model is missing. */
  private embeddings() {
    const notice = (this.embedder as { notice?: string | null }).notice;
    return { model: this.embedder.modelId, ...(notice ? { notice } : {}) };
  }

  /** The process is up. */
  @Get('live')
  @HttpCode(200)
  live() {
    return { status: 'ok' };
  }

  /**
   * The database answers within HEALTH_DB_TIMEOUT_MS (503 otherwise). Anyone learns that much;
   * what lies behind it (free disk, models, backups, latency) only with METRICS_TOKEN.
   */
  @Get('ready')
  async ready(
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const details = presentsMetricsToken(authorization, this.config.env.METRICS_TOKEN);
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
      // Ready while storage is full: reads still work, and writes are refused with a reason.
      if (!details) return { status: 'ok' };
      return {
        status: 'ok',
        database: { status: 'up', latencyMs: Date.now() - started },
        storage: this.storageState(),
        ...(await this.backupState()),
        embeddings: this.embeddings(),
        llm: this.languageModel(),
      };
    } catch (err) {
      // The reason goes to the log: a database error names hosts, roles and tables.
      this.logger.warn({ msg: 'readiness check failed', error: (err as Error).message });
      res.status(503);
      if (!details) return { status: 'unavailable' };
      return {
        status: 'unavailable',
        database: { status: 'down' },
        storage: this.storageState(),
        ...(await this.backupState()),
        embeddings: this.embeddings(),
        llm: this.languageModel(),
      };
    } finally {
      clearTimeout(timer);
    }
  }
}
