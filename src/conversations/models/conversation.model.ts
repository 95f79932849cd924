import { Field, GraphQLISODateTime, ID, Int, ObjectType } from '@nestjs/graphql';
import { ConnectionType } from '../../common/pagination/connection.js';
import { JSONObjectScalar } from '../../common/scalars/json.scalar.js';
import { MessageRole } from '../message-role.enum.js';

@ObjectType('Message', { description: 'One turn of the immutable conversation log.' })
export class MessageModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  conversationId: string;

  @Field(() => Int, { description: '0, 1, 2, ... with no gaps within a conversation.' })
  turnIndex: number;

  @Field(() => MessageRole)
  role: MessageRole;

  @Field({
    description:
      "What was said; for an agent's reply made for another participant alone, a line saying it is withheld.",
  })
  content: string;

  @Field(() => Int, { description: 'Tokens in content (o200k_base tokenizer).' })
  tokenCount: number;

  @Field(() => JSONObjectScalar)
  metadata: Record<string, unknown>;

  @Field(() => String, { nullable: true })
  clientMessageId: string | null;

  @Field(() => ID, {
    name: 'authorId',
    description:
      'Who said it (a user turn), or the participant the agent answered (an assistant turn).',
  })
  userId: string;

  @Field(() => GraphQLISODateTime, { description: 'When the server stored it.' })
  createdAt: Date;

  @Field(() => GraphQLISODateTime, {
    description: 'When it was said: createdAt, or the original time for imported turns.',
  })
  occurredAt: Date;

  @Field({
    description:
      'A notice rather than a reply: what the agent says when no language model is configured, or when its reply failed. Kept in the log; left out of search, summaries, facts and memories.',
  })
  placeholder: boolean;
}

@ObjectType()
export class MessageConnection extends ConnectionType(MessageModel, 'Message') {}

@ObjectType('Conversation')
export class ConversationModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  legacyId: string;

  @Field(() => String, { nullable: true })
  title: string | null;

  @Field({
    description:
      'Your own switch: whether memories about you may be created from your turns in this conversation.',
  })
  remember: boolean;

  @Field(() => ID, { description: 'The member who started it: theirs to delete.' })
  startedBy: string;

  @Field(() => Int, {
    nullable: true,
    description:
      'Set once you left it: you read the turns below this index (those said while you took part), nothing after. Null while you take part.',
  })
  readableUntilTurn: number | null;

  @Field(() => Int, { description: 'Turns stored so far (that you may read).' })
  messageCount: number;

  @Field(() => GraphQLISODateTime)
  lastActivityAt: Date;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;
}

@ObjectType('ConversationParticipant', {
  description: 'A member taking part, or who took part, in a conversation.',
})
export class ConversationParticipantModel {
  @Field(() => ID)
  userId: string;

  @Field(() => GraphQLISODateTime)
  joinedAt: Date;

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When they left, if they did.' })
  leftAt: Date | null;
}

@ObjectType()
export class ConversationConnection extends ConnectionType(ConversationModel, 'Conversation') {}

@ObjectType()
export class ImportConversationPayload {
  @Field(() => ConversationModel)
  conversation: ConversationModel;

  @Field(() => Int)
  importedCount: number;
}

@ObjectType('LeftBehindConversation', {
  description:
    'One of your conversations in a legacy you are no longer a member of: yours to delete (deleteConversation); its turns are no longer readable.',
})
export class LeftBehindConversationModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  legacyId: string;

  @Field(() => String, { nullable: true })
  title: string | null;

  @Field(() => Int, { description: 'Turns stored.' })
  messageCount: number;

  @Field(() => GraphQLISODateTime)
  lastActivityAt: Date;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;
}

@ObjectType()
export class LeftBehindConversationConnection extends ConnectionType(
  LeftBehindConversationModel,
  'LeftBehindConversation',
) {}
