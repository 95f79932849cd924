import { Module, OnModuleInit } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module.js';
import { JobsService } from '../jobs/jobs.service.js';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { EmbeddingRepository } from './embedding.repository.js';
import { EmbeddingService, REEMBED_JOB } from './embedding.service.js';
import { EmbeddingsResolver } from './embeddings.resolver.js';

/** Vector storage shared by every searchable kind, imported by the modules that embed. */
@Module({
  imports: [LlmModule],
  providers: [EmbeddingRepository, EmbeddingService, EmbeddingsResolver],
  exports: [EmbeddingService, EmbeddingRepository],
})
export class EmbeddingsModule implements OnModuleInit {
  constructor(
    private readonly embeddings: EmbeddingService,
    private readonly jobs: JobsService,
    private readonly tasks: ScheduledTasksService,
  ) {}

  onModuleInit(): void {
    this.jobs.register(REEMBED_JOB, () => this.embeddings.reembed());
    this.tasks.register('embeddings-sweep', '*/1 * * * *', async () => {
      await this.embeddings.sweep();
    });
  }
}
