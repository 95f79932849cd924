import { UseGuards } from '@nestjs/common';
import { Args, Query, Resolver } from '@nestjs/graphql';
import { ForwardPageArgs } from '../common/pagination/connection.js';
import { GqlAuthGuard, PlatformAdminGuard } from '../identity/guards/gql-auth.guard.js';
import { AuditService } from './audit.service.js';
import { AuditEntryConnection, AuditEntryModel } from './models/audit-entry.model.js';

@Resolver(() => AuditEntryModel)
@UseGuards(GqlAuthGuard, PlatformAdminGuard)
export class AuditResolver {
  constructor(private readonly audit: AuditService) {}

  @Query(() => AuditEntryConnection, {
    description:
      "Platform administrators' uses of other users' data (retrievalDebug, failedJobs, retryJob), newest first. Platform administrators only.",
  })
  auditLog(@Args() page: ForwardPageArgs) {
    return this.audit.list(page);
  }
}
