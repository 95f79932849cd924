import { Field, ID, InputType } from '@nestjs/graphql';
import {
  ArrayMaxSize,
  IsArray,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
} from 'class-validator';
import { JSONObjectScalar } from '../../common/scalars/json.scalar.js';
import { TurnInput } from '../../conversations/dto/conversation.inputs.js';

/** As many as a reply's context can hold, with room to spare. */
export const MAX_USED_IDS = 100;

/** A recall or context item: its source type and id, as RecallItem.id gives it. */
export const ITEM_ID = /^(FACT|MEMORY|PERIOD_SUMMARY|STORY|SUMMARY|TURN):[0-9a-f-]{36}$/i;

@InputType()
export class RecordAssistantMessageInput extends TurnInput {
  @Field(() => JSONObjectScalar, { nullable: true })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;

  @Field(() => [ID], {
    nullable: true,
    description: `Your memories your model used for this answer (at most ${MAX_USED_IDS}): recorded as Message.usedMemories, each counting one reference, as the agent's own replies do. Each must be one of your active memories.`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_USED_IDS)
  @IsUUID('all', { each: true })
  usedMemoryIds?: string[];

  @Field(() => [ID], {
    nullable: true,
    description: `Context or recall items your model used, by their recall id: RecallItem.id, which a ContextItem gives as recallItemId ("MEMORY:<id>", "FACT:<id>"), at most ${MAX_USED_IDS}. MEMORY items count like usedMemoryIds; FACT items must be facts you may see (uses of facts are not counted, as for the agent's replies). Other source types are refused.`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_USED_IDS)
  @IsString({ each: true })
  @Matches(ITEM_ID, { each: true, message: 'each of usedItemIds is SOURCE_TYPE:id' })
  usedItemIds?: string[];
}
