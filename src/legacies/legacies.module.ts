import { Module } from '@nestjs/common';
import { QuotasModule } from '../quotas/quotas.module.js';
import { LegaciesResolver, LegacyMemberResolver } from './legacies.resolver.js';
import { LegaciesService } from './legacies.service.js';
import { LegacyRepository } from './legacy.repository.js';
import { UserEmailResolver } from './user-email.resolver.js';

@Module({
  imports: [QuotasModule],
  providers: [
    LegacyRepository,
    LegaciesService,
    LegaciesResolver,
    LegacyMemberResolver,
    UserEmailResolver,
  ],
  exports: [LegaciesService, LegacyRepository],
})
export class LegaciesModule {}
