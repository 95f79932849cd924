import { UseGuards } from '@nestjs/common';
import { Query, Resolver } from '@nestjs/graphql';
import { GqlAuthGuard, PlatformAdminGuard } from '../identity/guards/gql-auth.guard.js';
import { EmbeddingService } from './embedding.service.js';
import { EmbeddingStatusModel } from './models/embedding-status.model.js';

@Resolver(() => EmbeddingStatusModel)
@UseGuards(GqlAuthGuard, PlatformAdminGuard)
export class EmbeddingsResolver {
  constructor(private readonly embeddings: EmbeddingService) {}

  @Query(() => EmbeddingStatusModel, {
    description: 'Embedding models and re-embedding progress (platform administrators).',
  })
  embeddingStatus() {
    return this.embeddings.status();
  }
}
