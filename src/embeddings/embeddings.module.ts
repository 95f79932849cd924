import { Global, Module } from '@nestjs/common';
import { EmbeddingRepository } from './embedding.repository.js';
import { EmbeddingService } from './embedding.service.js';
import { EmbeddingsResolver } from './embeddings.resolver.js';

/** Vector storage shared by every searchable kind; global infrastructure. */
@Global()
@Module({
  providers: [EmbeddingRepository, EmbeddingService, EmbeddingsResolver],
  exports: [EmbeddingService, EmbeddingRepository],
})
export class EmbeddingsModule {}
