import { DynamicModule, Global, Injectable, Module, OnModuleInit } from '@nestjs/common';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { MetricsController } from './metrics.controller.js';
import { GaugesRepository } from './gauges.repository.js';
import { ServiceMetrics } from './service-metrics.js';

/** Points the database-backed gauges at the job queue and the embedding backlog. */
@Injectable()
class DatabaseGauges implements OnModuleInit {
  constructor(
    private readonly metrics: ServiceMetrics,
    private readonly repo: GaugesRepository,
    private readonly embeddings: EmbeddingService,
  ) {}

  onModuleInit(): void {
    this.metrics.readDatabaseWith(async () => {
      const [queue, status] = await Promise.all([this.repo.jobQueue(), this.embeddings.status()]);
      return {
        ...queue,
        embeddingBacklog: status.kinds.map((k) => ({ kind: k.kind, missing: k.missing })),
      };
    });
  }
}

/**
 * Prometheus metrics: the registry (made with the application, see AppModule), GET /metrics,
 * and the gauges read from the database. Global so that the job worker and the model usage
 * recorder can count into it.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(metrics: ServiceMetrics): DynamicModule {
    return {
      module: MetricsModule,
      imports: [EmbeddingsModule],
      controllers: [MetricsController],
      providers: [{ provide: ServiceMetrics, useValue: metrics }, GaugesRepository, DatabaseGauges],
      exports: [ServiceMetrics],
    };
  }
}
