import { UseGuards } from '@nestjs/common';
import { Args, Context, ID, Mutation, Query, Resolver, Subscription } from '@nestjs/graphql';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import type { RequestContext } from '../graphql/request-context.js';
import { unlessEnded } from '../graphql/session-bound.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { LegaciesService } from '../legacies/legacies.service.js';
import {
  BackfillPeriodSummariesInput,
  CompareYearsArgs,
  PeriodSummariesArgs,
  SummarizePeriodInput,
} from './dto/period-summary.inputs.js';
import {
  PeriodSummaryConnection,
  PeriodSummaryModel,
  PeriodSummaryOutcome,
  PeriodSummaryProgressModel,
  SummarizePeriodPayload,
  YearComparisonModel,
} from './models/period-summary.model.js';
import { PeriodSummaryEntity } from './period-summary.entity.js';
import { PeriodSummariesService } from './period-summaries.service.js';
import { BackfillProgressRow } from './period-summary.repository.js';

function progressModel(row: BackfillProgressRow): PeriodSummaryProgressModel {
  return { ...row, done: row.pending === 0 };
}

@Resolver(() => PeriodSummaryModel)
@UseGuards(GqlAuthGuard)
export class PeriodSummariesResolver {
  constructor(
    private readonly service: PeriodSummariesService,
    private readonly legacies: LegaciesService,
  ) {}

  @Query(() => PeriodSummaryConnection, {
    description: 'Your weekly, monthly and yearly summaries in a legacy, newest period first.',
  })
  periodSummaries(@CurrentUser() user: UserEntity, @Args() args: PeriodSummariesArgs) {
    return this.service.list(user, args.legacyId, args.period ?? null, args);
  }

  @Query(() => PeriodSummaryModel, { description: 'One of your period summaries.' })
  periodSummary(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ): Promise<PeriodSummaryEntity> {
    return this.service.get(user, id);
  }

  @Query(() => PeriodSummaryProgressModel, {
    description: 'How far a backfillPeriodSummaries has got.',
  })
  async periodSummaryProgress(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    return progressModel(await this.service.progress(user, id));
  }

  @Query(() => YearComparisonModel, {
    description:
      'What changed between the same month (or the whole year) of two years, composed from your stored period summaries only.',
  })
  compareYears(@CurrentUser() user: UserEntity, @Args() args: CompareYearsArgs) {
    return this.service.compareYears(user, args);
  }

  @Mutation(() => SummarizePeriodPayload, {
    description:
      'Summarizes (again) one ended week, month or year of your conversations now, even one you deleted.',
  })
  async summarizePeriod(
    @CurrentUser() user: UserEntity,
    @Args('input') input: SummarizePeriodInput,
  ): Promise<SummarizePeriodPayload> {
    const result = await this.service.summarizePeriod(user, input);
    return {
      outcome:
        result.outcome === 'QUEUED'
          ? PeriodSummaryOutcome.QUEUED
          : result.summary
            ? PeriodSummaryOutcome.STORED
            : PeriodSummaryOutcome.EMPTY,
      periodSummary: result.summary as PeriodSummaryModel | null,
    };
  }

  @Mutation(() => PeriodSummaryProgressModel, {
    description:
      'Queues every ended week, month and year of the range that has no summary yet; follow it with periodSummaryProgress.',
  })
  async backfillPeriodSummaries(
    @CurrentUser() user: UserEntity,
    @Args('input') input: BackfillPeriodSummariesInput,
  ) {
    return progressModel(await this.service.backfill(user, input));
  }

  @Mutation(() => Boolean, {
    description:
      'Deletes one of your period summaries now; it is not rebuilt unless you ask with summarizePeriod.',
  })
  async deletePeriodSummary(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ): Promise<boolean> {
    await this.service.delete(user, id);
    return true;
  }

  @Subscription(() => PeriodSummaryModel, {
    description: 'Your period summaries in a legacy as they are stored (new or rebuilt).',
    resolve: unlessEnded((summary: PeriodSummaryModel) => summary),
  })
  async periodSummaryAdded(
    @CurrentUser() user: UserEntity,
    @Args('legacyId', { type: () => ID }, UuidPipe) legacyId: string,
    @Context() context: RequestContext,
  ) {
    return this.legacies.memberSubscription(user.id, legacyId, context, () =>
      this.service.subscribe(user, legacyId),
    );
  }
}
