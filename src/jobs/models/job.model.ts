import { Field, GraphQLISODateTime, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { ConnectionType } from '../../common/pagination/connection.js';
import { JSONObjectScalar } from '../../common/scalars/json.scalar.js';
import { JobStatus } from '../job.entity.js';

registerEnumType(JobStatus, { name: 'JobStatus' });

@ObjectType('Job', { description: 'A background job (platform administrators only).' })
export class JobModel {
  @Field(() => ID)
  id: string;

  @Field()
  type: string;

  @Field({ description: 'Idempotency key.' })
  key: string;

  @Field(() => JSONObjectScalar, { description: 'Ids and parameters only, never user content.' })
  payload: Record<string, unknown>;

  @Field(() => JobStatus)
  status: JobStatus;

  @Field(() => Int)
  attempts: number;

  @Field(() => Int)
  maxAttempts: number;

  @Field(() => String, { nullable: true })
  lastError: string | null;

  @Field(() => GraphQLISODateTime)
  runAt: Date;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;

  @Field(() => GraphQLISODateTime)
  updatedAt: Date;
}

@ObjectType()
export class JobConnection extends ConnectionType(JobModel, 'Job') {}
