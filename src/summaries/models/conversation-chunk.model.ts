import { Field, GraphQLISODateTime, ID, Int, ObjectType } from '@nestjs/graphql';
import { ConversationModel } from '../../conversations/models/conversation.model.js';

@ObjectType('StructuredSummary', { description: 'Short strings taken from the summarized turns.' })
export class StructuredSummaryModel {
  @Field(() => [String], { description: 'Anything stated as fact, about anyone.' })
  facts: string[];

  @Field(() => [String])
  preferences: string[];

  @Field(() => [String])
  decisions: string[];

  @Field(() => [String])
  todos: string[];

  @Field(() => [String], { description: 'People, places, organisations, pets.' })
  entities: string[];
}

@ObjectType('ConversationChunk', { description: 'The summary of a range of turns.' })
export class ConversationChunkModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  conversationId: string;

  @Field(() => Int, { description: 'First turn index summarized.' })
  rangeStart: number;

  @Field(() => Int, { description: 'Last turn index summarized (inclusive).' })
  rangeEnd: number;

  @Field(() => Int)
  turnCount: number;

  @Field({ description: '2 to 4 sentences: key topics and emotional tone.' })
  content: string;

  @Field(() => StructuredSummaryModel)
  structured: StructuredSummaryModel;

  @Field({ description: 'The language model that wrote it.' })
  model: string;

  @Field(() => Int, { description: 'Tokens in content.' })
  tokenCount: number;

  @Field(() => GraphQLISODateTime, { description: 'When its first turn was said.' })
  firstOccurredAt: Date;

  @Field(() => GraphQLISODateTime, { description: 'When its last turn was said.' })
  lastOccurredAt: Date;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;
}

@ObjectType()
export class SummarizeNowPayload {
  @Field(() => ConversationModel)
  conversation: ConversationModel;

  @Field(() => [ConversationChunkModel], { description: 'The chunks this pass wrote.' })
  chunks: ConversationChunkModel[];

  @Field(() => Int, { description: 'Turns no chunk covers yet.' })
  unsummarizedTurns: number;

  @Field({
    description:
      'The model was unavailable or answered badly: nothing was lost, and the pass continues in the background.',
  })
  deferred: boolean;
}
