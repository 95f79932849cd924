import { Field, GraphQLISODateTime, ID, ObjectType, registerEnumType } from '@nestjs/graphql';
import { ConnectionType } from '../../common/pagination/connection.js';
import { JSONObjectScalar } from '../../common/scalars/json.scalar.js';
import { AuditOperation } from '../audit-entry.entity.js';

registerEnumType(AuditOperation, {
  name: 'AuditOperation',
  description: "What a platform administrator did with another user's data.",
  valuesMap: {
    RETRIEVAL_DEBUG: { description: "retrievalDebug on another user's conversation." },
    FAILED_JOBS: { description: 'failedJobs: the jobs of every user.' },
    RETRY_JOB: { description: "retryJob: ran a user's job again." },
  },
});

@ObjectType('AuditEntry', {
  description:
    "A platform administrator's use of another user's data: who, when, what. Ids only, never private text.",
})
export class AuditEntryModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID, {
    nullable: true,
    description: 'The administrator; null once their account is gone.',
  })
  actorId: string | null;

  @Field(() => AuditOperation)
  operation: AuditOperation;

  @Field(() => ID, { nullable: true })
  targetUserId: string | null;

  @Field(() => ID, { nullable: true })
  targetLegacyId: string | null;

  @Field(() => ID, { nullable: true })
  targetConversationId: string | null;

  @Field(() => JSONObjectScalar, {
    description: 'Further ids: jobIds, and the userIds, legacyIds and conversationIds they name.',
  })
  details: Record<string, string[]>;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;
}

@ObjectType()
export class AuditEntryConnection extends ConnectionType(AuditEntryModel, 'AuditEntry') {}
