import { UseGuards } from '@nestjs/common';
import { Args, ID, Mutation, Query, Resolver } from '@nestjs/graphql';
import {
  decodeCursor,
  encodeCursor,
  ForwardPageArgs,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import { UuidPipe } from '../common/validation/uuid.pipe.js';
import { AppConfig } from '../config/app-config.js';
import { GqlAuthGuard, PlatformAdminGuard } from '../identity/guards/gql-auth.guard.js';
import { JobsErrorCode, JobsException } from './jobs.exception.js';
import { JobsService } from './jobs.service.js';
import { JobConnection, JobModel } from './models/job.model.js';

@Resolver(() => JobModel)
@UseGuards(GqlAuthGuard, PlatformAdminGuard)
export class JobsResolver {
  constructor(
    private readonly jobs: JobsService,
    private readonly config: AppConfig,
  ) {}

  @Query(() => JobConnection, { description: 'Jobs that exhausted their attempts, newest first.' })
  async failedJobs(@Args() page: ForwardPageArgs) {
    const request = pageRequest(page, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor
      ? (() => {
          const [updatedAt, id] = decodeCursor(request.cursor, 'after', 2) as string[];
          return { updatedAt, id };
        })()
      : undefined;
    const rows = await this.jobs.pageFailed(request.limit + 1, after);
    return toConnection(rows, request, (j) => encodeCursor([j.updatedAt.toISOString(), j.id]));
  }

  @Mutation(() => JobModel, { description: 'Runs a failed job again with fresh attempts.' })
  async retryJob(@Args('id', { type: () => ID }, UuidPipe) id: string) {
    const retried = await this.jobs.retry(id);
    if (retried) return retried;
    const job = await this.jobs.findById(id);
    if (!job) throw new JobsException(JobsErrorCode.JOB_NOT_FOUND, 'Job not found.');
    throw new JobsException(
      JobsErrorCode.JOB_NOT_FAILED,
      job.status === 'FAILED'
        ? 'An identical job is already waiting to run.'
        : `Only failed jobs can be retried; this one is ${job.status}.`,
    );
  }
}
