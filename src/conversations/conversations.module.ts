import { Module } from '@nestjs/common';
import { LegaciesModule } from '../legacies/legacies.module.js';
import { QuotasModule } from '../quotas/quotas.module.js';
import { ConversationAccessService } from './conversation-access.service.js';
import { ConversationImportService } from './conversation-import.service.js';
import { ConversationLimitsService } from './conversation-limits.service.js';
import { ConversationParticipantRepository } from './conversation-participant.repository.js';
import { ConversationRepository } from './conversation.repository.js';
import { ConversationsResolver } from './conversations.resolver.js';
import { ConversationsService } from './conversations.service.js';
import { MessageRepository } from './message.repository.js';
import { TurnEvents } from './turn-events.js';
import { TurnReplayService } from './turn-replay.service.js';

@Module({
  imports: [LegaciesModule, QuotasModule],
  providers: [
    ConversationRepository,
    ConversationParticipantRepository,
    ConversationAccessService,
    ConversationLimitsService,
    ConversationImportService,
    MessageRepository,
    ConversationsService,
    TurnEvents,
    TurnReplayService,
    ConversationsResolver,
  ],
  exports: [ConversationsService, ConversationImportService, ConversationLimitsService, TurnEvents],
})
export class ConversationsModule {}
