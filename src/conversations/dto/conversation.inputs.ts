import { Field, GraphQLISODateTime, ID, InputType } from '@nestjs/graphql';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDate,
  IsEnum,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { JSONObjectScalar } from '../../common/scalars/json.scalar.js';
import { MessageRole } from '../message-role.enum.js';

@InputType()
export class StartConversationInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;

  @Field(() => Boolean, {
    nullable: true,
    description: 'Whether memories may be created from it; defaults to your rememberByDefault.',
  })
  @IsOptional()
  @IsBoolean()
  remember?: boolean;

  @Field(() => [ID], {
    nullable: true,
    description:
      'Other members of the legacy who take part from the start (a together conversation); each has their own remember switch, off until they turn it on.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsUUID('all', { each: true })
  participantIds?: string[];
}

@InputType()
export class AddConversationParticipantInput {
  @Field(() => ID)
  @IsUUID()
  conversationId: string;

  @Field(() => ID, { description: 'A member of the legacy.' })
  @IsUUID()
  userId: string;
}

/** The fields of a turn sent to a conversation (sendMessage, recordAssistantMessage). */
@InputType({ isAbstract: true })
export abstract class TurnInput {
  @Field(() => ID)
  @IsUUID()
  conversationId: string;

  @Field()
  @IsString()
  content: string;

  @Field(() => String, {
    nullable: true,
    description:
      'Makes the send idempotent: the same id (yours, in this conversation) returns the same message. Ids starting with "reply:" are the agent\'s.',
  })
  @IsOptional()
  @IsString()
  @Matches(/^(?!reply:)/, {
    message: 'clientMessageId may not start with "reply:" (the agent\'s own ids).',
  })
  clientMessageId?: string;
}

@InputType()
export class ImportedMessageInput {
  @Field(() => MessageRole)
  @IsEnum(MessageRole)
  role: MessageRole;

  @Field()
  @IsString()
  content: string;

  @Field(() => GraphQLISODateTime)
  @IsDate()
  occurredAt: Date;

  @Field(() => JSONObjectScalar, { nullable: true })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;
}

@InputType()
export class ImportConversationInput {
  @Field(() => ID)
  @IsUUID()
  legacyId: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;

  @Field(() => [ImportedMessageInput])
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100_000)
  @ValidateNested({ each: true })
  @Type(() => ImportedMessageInput)
  messages: ImportedMessageInput[];
}
