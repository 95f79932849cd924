import { UseGuards } from '@nestjs/common';
import { Args, Query, Resolver } from '@nestjs/graphql';
import { GqlAuthGuard, PlatformAdminGuard } from '../identity/guards/gql-auth.guard.js';
import { PeriodArgs } from '../common/dto/period.args.js';
import { MemoryMetricsReportModel } from './models/retrieval-metrics.model.js';
import { RetrievalMetricsService } from './retrieval-metrics.service.js';

/** The retrieval metrics report (platform admins). */
@Resolver()
@UseGuards(GqlAuthGuard, PlatformAdminGuard)
export class RetrievalMetricsResolver {
  constructor(private readonly metrics: RetrievalMetricsService) {}

  @Query(() => MemoryMetricsReportModel, {
    description:
      'Retrieval over a period (platform admins): hit rate, fallback, widening and truncation shares, latency percentiles (per path), composition by source, and the upgrade triggers.',
  })
  memoryMetricsReport(@Args() args: PeriodArgs) {
    return this.metrics.report(args.from, args.to);
  }
}
