import { Field, ObjectType } from '@nestjs/graphql';
import { MessageModel } from '../../conversations/models/conversation.model.js';

@ObjectType()
export class SendMessagePayload {
  @Field(() => MessageModel, { description: "The user's stored turn." })
  message: MessageModel;

  @Field(() => MessageModel, {
    nullable: true,
    description: "The agent's stored reply; null when replies are off (AGENT_REPLY=off).",
  })
  reply: MessageModel | null;
}
