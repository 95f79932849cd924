import { Module, OnModuleInit } from '@nestjs/common';
import { ContextAssemblerService } from '../context/context-assembler.service.js';
import { ContextModule } from '../context/context.module.js';
import { EmbeddingService } from '../embeddings/embedding.service.js';
import { EmbeddingsModule } from '../embeddings/embeddings.module.js';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { SearchModule } from '../search/search.module.js';
import { SearchService } from '../search/search.service.js';
import { PROFILE_EMBED_WHERE, PROFILE_KIND, ProfileRepository } from './profile.repository.js';
import { ProfilesContextProvider } from './profiles-context.provider.js';
import { ProfilesResolver } from './profiles.resolver.js';
import { ProfilesService } from './profiles.service.js';

/**
 * The member's own profile: the API, its vectors, and its place in their context and recall,
 * with their consent. Memory and fact extraction never read it.
 */
@Module({
  imports: [LegaciesModule, EmbeddingsModule, ContextModule, SearchModule],
  providers: [ProfileRepository, ProfilesService, ProfilesContextProvider, ProfilesResolver],
})
export class ProfilesModule implements OnModuleInit {
  constructor(
    private readonly contextProvider: ProfilesContextProvider,
    private readonly embeddings: EmbeddingService,
    private readonly assembler: ContextAssemblerService,
    private readonly search: SearchService,
  ) {}

  onModuleInit(): void {
    this.assembler.register(this.contextProvider);
    this.search.registerSource(this.contextProvider.asRecallSource());
    this.embeddings.registerKind({
      kind: PROFILE_KIND,
      table: 'profile_entries',
      textSql: 'i.text',
      // Without consent nothing of the profile is sent to a model, the embedder included.
      whereSql: PROFILE_EMBED_WHERE,
      legacyColumn: 'legacy_id',
      userColumn: 'user_id',
    });
  }
}
