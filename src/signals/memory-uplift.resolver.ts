import { UseGuards } from '@nestjs/common';
import { Args, Query, Resolver } from '@nestjs/graphql';
import { GqlAuthGuard, PlatformAdminGuard } from '../identity/guards/gql-auth.guard.js';
import { PeriodArgs } from '../common/dto/period.args.js';
import { MemoryUpliftService } from './memory-uplift.service.js';
import { MemoryUpliftModel } from './models/memory-uplift.model.js';

/** The memory A/B comparison (platform admins): aggregates over every user, nothing per user. */
@Resolver()
@UseGuards(GqlAuthGuard, PlatformAdminGuard)
export class MemoryUpliftResolver {
  constructor(private readonly uplift: MemoryUpliftService) {}

  @Query(() => MemoryUpliftModel, {
    description:
      'Does memory help? Replies with the memory block against the MEMORY_AB_HOLDOUT arm over a period (platform admins): memory references, "forgot" complaints per 100 turns and conversation length, with counts and 95% confidence intervals.',
  })
  memoryUplift(@Args() args: PeriodArgs) {
    return this.uplift.uplift(args.from, args.to);
  }
}
