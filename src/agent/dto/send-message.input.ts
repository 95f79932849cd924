import { InputType } from '@nestjs/graphql';
import { TurnInput } from '../../conversations/dto/conversation.inputs.js';

@InputType()
export class SendMessageInput extends TurnInput {}
