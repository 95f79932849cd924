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
import { AuditOperation } from '../audit/audit-entry.entity.js';
import { AuditService } from '../audit/audit.service.js';
import { CurrentUser } from '../identity/decorators/current-user.decorator.js';
import { GqlAuthGuard, PlatformAdminGuard } from '../identity/guards/gql-auth.guard.js';
import { UserEntity } from '../identity/user.entity.js';
import { JobsErrorCode, JobsException } from './jobs.exception.js';
import { JobsService } from './jobs.service.js';
import { JobConnection, JobModel } from './models/job.model.js';

@Resolver(() => JobModel)
@UseGuards(GqlAuthGuard, PlatformAdminGuard)
export class JobsResolver {
  constructor(
    private readonly jobs: JobsService,
    private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {}

  @Query(() => JobConnection, { description: 'Jobs that exhausted their attempts, newest first.' })
  async failedJobs(@CurrentUser() user: UserEntity, @Args() page: ForwardPageArgs) {
    const request = pageRequest(page, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor
      ? (() => {
          const [updatedAt, id] = decodeCursor(request.cursor, 'after', 2) as string[];
          return { updatedAt, id };
        })()
      : undefined;
    const rows = await this.jobs.pageFailed(request.limit + 1, after);
    const connection = toConnection(rows, request, (j) =>
      encodeCursor([j.updatedAt.toISOString(), j.id]),
    );
    await this.audit.jobsAccessed(user, AuditOperation.FAILED_JOBS, connection.nodes);
    return connection;
  }

  @Mutation(() => JobModel, { description: 'Runs a failed job again with fresh attempts.' })
  async retryJob(
    @CurrentUser() user: UserEntity,
    @Args('id', { type: () => ID }, UuidPipe) id: string,
  ) {
    const job = await this.jobs.findById(id);
    if (!job) throw new JobsException(JobsErrorCode.JOB_NOT_FOUND, 'Job not found.');
    if (job.status !== 'FAILED') {
      throw new JobsException(
        JobsErrorCode.JOB_NOT_FAILED,
        `Only failed jobs can be retried; this one is ${job.status}.`,
      );
    }
    // Recorded before it runs again: no retry goes unrecorded.
    await this.audit.jobsAccessed(user, AuditOperation.RETRY_JOB, [job]);
    const retried = await this.jobs.retry(id);
    if (retried) return retried;
    throw new JobsException(
      JobsErrorCode.JOB_NOT_FAILED,
      'An identical job is already waiting to run.',
    );
  }
}
