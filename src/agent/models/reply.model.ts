import {
  Field,
  Float,
  GraphQLISODateTime,
  ID,
  Int,
  ObjectType,
  registerEnumType,
} from '@nestjs/graphql';
import type { ContextSectionName, ContextSourceType } from '../../context/context.types.js';
import { ContextSectionKind, SourceType } from '../../context/models/context-enums.model.js';

export enum MemoryActionKind {
  SAVED = 'SAVED',
  FORGOTTEN = 'FORGOTTEN',
  LOOKED_UP = 'LOOKED_UP',
  NOT_SAVED = 'NOT_SAVED',
}
registerEnumType(MemoryActionKind, {
  name: 'MemoryActionKind',
  description:
    'What a reply did to your memories: SAVED, FORGOTTEN (restorable with restoreMemory), LOOKED_UP (answered from recall), NOT_SAVED (memory paused, remembering off for the conversation, or not a valid memory).',
});

export enum MemoryNotSavedReason {
  MEMORY_PAUSED = 'MEMORY_PAUSED',
  REMEMBER_OFF = 'REMEMBER_OFF',
  INVALID_MEMORY = 'INVALID_MEMORY',
}
registerEnumType(MemoryNotSavedReason, {
  name: 'MemoryNotSavedReason',
  description:
    'Why a memory asked for in chat was not saved: MEMORY_PAUSED (your memory is paused), REMEMBER_OFF (remembering is off in this conversation), INVALID_MEMORY (not something that can be kept as a memory).',
});

export enum ReplyErrorCode {
  MODEL_UNAVAILABLE = 'MODEL_UNAVAILABLE',
  MODEL_OUTPUT_INVALID = 'MODEL_OUTPUT_INVALID',
  CANCELLED = 'CANCELLED',
  INTERNAL = 'INTERNAL',
}
registerEnumType(ReplyErrorCode, {
  name: 'ReplyErrorCode',
  description:
    'Why an error turn was stored instead of a reply: MODEL_UNAVAILABLE (the model did not answer after its retries), MODEL_OUTPUT_INVALID (it answered something unusable), CANCELLED (nobody waited for the reply, so the embedded model stopped writing it), INTERNAL (anything else).',
});

@ObjectType('AssistantReplyDelta', {
  description:
    'A chunk of the reply being streamed for a user turn. Chunks arrive in sequence order; the last event has done = true, the stored turn id and whether it is an error turn.',
})
export class ReplyDeltaModel {
  @Field(() => ID)
  conversationId: string;

  @Field(() => ID, { description: 'The user turn being answered.' })
  replyToMessageId: string;

  @Field(() => Int, { description: '0, 1, 2, ... within one reply.' })
  sequence: number;

  @Field({ description: 'The next piece of text; empty on the final event.' })
  text: string;

  @Field()
  done: boolean;

  @Field(() => ID, {
    nullable: true,
    description: 'The stored assistant turn, on the final event.',
  })
  messageId: string | null;

  @Field({
    description: 'True on the final event when the model failed and an error turn was stored.',
  })
  isError: boolean;
}

@ObjectType('ContextItemRef', {
  description:
    'A context item the model was given for a reply. It has no id: its score belongs to this reply; `recallItemId` names the item.',
})
export class ContextItemRefModel {
  @Field(() => SourceType)
  sourceType: ContextSourceType;

  @Field(() => ID, { description: 'The RecallItem it is (its id).' })
  recallItemId: string;

  @Field(() => ID, { description: "The item's own record (see ItemProvenance.sourceId)." })
  sourceId: string;

  @Field(() => ContextSectionKind, { description: 'The context section it was placed in.' })
  section: ContextSectionName;

  @Field(() => Float)
  score: number;
}

@ObjectType('MemoryAction', {
  description: 'Something the agent did to your memories because you asked in chat.',
})
export class MemoryActionModel {
  @Field(() => MemoryActionKind)
  action: MemoryActionKind;

  @Field(() => [ID], {
    description:
      'SAVED: the memory; FORGOTTEN: the memories forgotten; LOOKED_UP: your memories among what was recalled.',
  })
  memoryIds: string[];

  @Field(() => GraphQLISODateTime, {
    nullable: true,
    description: 'FORGOTTEN: restoreMemory brings each back until then.',
  })
  restorableUntil: Date | null;

  @Field(() => MemoryNotSavedReason, { nullable: true, description: 'NOT_SAVED: why.' })
  reason: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'FORGOTTEN and LOOKED_UP: what you asked about; null for "don\'t remember that".',
  })
  query: string | null;
}

@ObjectType('MessageGeneration', {
  description: 'How an assistant turn written by the agent came about.',
})
export class MessageGenerationModel {
  @Field(() => ID, { description: 'The user turn it answers.' })
  replyToMessageId: string;

  @Field({ description: 'The language model, such as openai:gpt-4o-mini or local:heuristic.' })
  model: string;

  @Field(() => Int)
  promptTokens: number;

  @Field(() => Int)
  completionTokens: number;

  @Field(() => String, {
    nullable: true,
    description:
      'Why the model stopped: stop (it finished), length (its token cap, LLM_REPLY_MAX_TOKENS), cancelled (nobody waited for the reply any more), tool_calls.',
  })
  finishReason: string | null;

  @Field({
    description:
      'True when the model did not finish the reply (finishReason length or cancelled): the reply is incomplete, and its text ends with " […]".',
  })
  cutOff: boolean;

  @Field()
  isError: boolean;

  @Field(() => ReplyErrorCode, { nullable: true, description: 'On an error turn: why.' })
  errorCode: string | null;

  @Field(() => [ContextItemRefModel])
  contextItems: ContextItemRefModel[];

  @Field(() => Int, { description: 'Tokens of the retrieved context sections.' })
  contextTokens: number;

  @Field({ description: 'True when some retrieved item was left out for lack of budget.' })
  contextTruncated: boolean;

  @Field(() => [MemoryActionModel], {
    description:
      'What the reply did to your memories when you asked it to remember, forget or look something up; empty otherwise.',
  })
  memoryActions: MemoryActionModel[];

  @Field(() => Int, { nullable: true })
  latencyMs: number | null;
}
