import { Field, ID, InputType } from '@nestjs/graphql';
import { IsOptional, IsString, IsUUID } from 'class-validator';

@InputType()
export class SendMessageInput {
  @Field(() => ID)
  @IsUUID()
  conversationId: string;

  @Field()
  @IsString()
  content: string;

  @Field(() => String, {
    nullable: true,
    description: 'Makes the send idempotent: the same id returns the same message.',
  })
  @IsOptional()
  @IsString()
  clientMessageId?: string;
}
