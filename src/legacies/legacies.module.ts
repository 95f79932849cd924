import { Module } from '@nestjs/common';
import { LegaciesResolver, LegacyMemberResolver } from './legacies.resolver.js';
import { LegaciesService } from './legacies.service.js';
import { LegacyRepository } from './legacy.repository.js';

@Module({
  providers: [LegacyRepository, LegaciesService, LegaciesResolver, LegacyMemberResolver],
  exports: [LegaciesService, LegacyRepository],
})
export class LegaciesModule {}
