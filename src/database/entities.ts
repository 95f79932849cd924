import { AuditEntryEntity } from '../audit/audit-entry.entity.js';
import { AssistantReplyEntity } from '../agent/assistant-reply.entity.js';
import { ConversationEntity } from '../conversations/conversation.entity.js';
import { MessageEntity } from '../conversations/message.entity.js';
import { FactEntity, FactHistoryEntity, FactSourceEntity } from '../facts/fact.entity.js';
import { UserEntity } from '../identity/user.entity.js';
import { JobEntity } from '../jobs/job.entity.js';
import { LegacyInvitationEntity } from '../legacies/legacy-invitation.entity.js';
import { LegacyMemberEntity } from '../legacies/legacy-member.entity.js';
import { LegacyEntity } from '../legacies/legacy.entity.js';
import {
  MemoryEntity,
  MemoryExtractionEntity,
  MemoryUseEntity,
} from '../memories/memory.entity.js';
import { ModelCallEntity } from '../llm/model-call.entity.js';
import { RetrievalMetricEntity } from '../search/retrieval-metric.entity.js';
import { MessageSegmentEntity } from '../search/segment.entity.js';
import { ConversationChunkEntity } from '../summaries/conversation-chunk.entity.js';
import { PeriodSummaryEntity } from '../periods/period-summary.entity.js';
import { StoryEntity } from '../stories/story.entity.js';
import { ProfileEntity } from '../profiles/profile.entity.js';
import { ProfileEntryEntity } from '../profiles/profile-entry.entity.js';
import { LegacyArchiveEntity } from '../archives/archive.entity.js';

/** Every entity, listed explicitly: globs do not work under ES modules and Jest. */
export const ENTITIES = [
  UserEntity,
  LegacyEntity,
  LegacyMemberEntity,
  LegacyInvitationEntity,
  ConversationEntity,
  MessageEntity,
  JobEntity,
  ModelCallEntity,
  AssistantReplyEntity,
  ConversationChunkEntity,
  FactEntity,
  FactSourceEntity,
  FactHistoryEntity,
  MemoryEntity,
  MemoryExtractionEntity,
  MemoryUseEntity,
  MessageSegmentEntity,
  RetrievalMetricEntity,
  AuditEntryEntity,
  PeriodSummaryEntity,
  StoryEntity,
  ProfileEntity,
  ProfileEntryEntity,
  LegacyArchiveEntity,
];
