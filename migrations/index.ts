import { Foundation1763800000000 } from './1763800000000-Foundation.js';
import { Jobs1763800100000 } from './1763800100000-Jobs.js';
import { Embeddings1763800200000 } from './1763800200000-Embeddings.js';
import { AgentReplies1763800300000 } from './1763800300000-AgentReplies.js';
import { EventPayloads1763800310000 } from './1763800310000-EventPayloads.js';
import { ConversationChunks1763800400000 } from './1763800400000-ConversationChunks.js';
import { Facts1763800410000 } from './1763800410000-Facts.js';
import { Memories1763800500000 } from './1763800500000-Memories.js';
import { Search1763800600000 } from './1763800600000-Search.js';
import { ModelCalls1763900000000 } from './1763900000000-ModelCalls.js';
import { CursorPrecision1764000000000 } from './1764000000000-CursorPrecision.js';
import { FactPrivacy1764000100000 } from './1764000100000-FactPrivacy.js';
import { FactPurge1764000110000 } from './1764000110000-FactPurge.js';
import { MetricsTextAndRetention1764000120000 } from './1764000120000-MetricsTextAndRetention.js';
import { InvitationConsentAndQuotas1764000300000 } from './1764000300000-InvitationConsentAndQuotas.js';
import { AuditLog1764000400000 } from './1764000400000-AuditLog.js';
import { InlineVectors1764000500000 } from './1764000500000-InlineVectors.js';
import { PeriodSummaries1764100000000 } from './1764100000000-PeriodSummaries.js';
import { PlaceholderTurns1764100100000 } from './1764100100000-PlaceholderTurns.js';
import { Stories1764100200000 } from './1764100200000-Stories.js';
import { StoryFacts1764100300000 } from './1764100300000-StoryFacts.js';
import { ImportedConversations1764100400000 } from './1764100400000-ImportedConversations.js';
import { FactRemovalPrivacy1764100500000 } from './1764100500000-FactRemovalPrivacy.js';
import { MemorySignals1764100600000 } from './1764100600000-MemorySignals.js';
import { Profiles1764100700000 } from './1764100700000-Profiles.js';
import { ChatMemoryActions1764100800000 } from './1764100800000-ChatMemoryActions.js';
import { TogetherConversations1764100900000 } from './1764100900000-TogetherConversations.js';
import { SegmentToldTime1764101000000 } from './1764101000000-SegmentToldTime.js';
import { FactReleaseSharedCount1764101100000 } from './1764101100000-FactReleaseSharedCount.js';
import { FactFamilyView1764101200000 } from './1764101200000-FactFamilyView.js';
import { RepliesAnsweredAlone1764101300000 } from './1764101300000-RepliesAnsweredAlone.js';
import { FactRevivedDetail1764101400000 } from './1764101400000-FactRevivedDetail.js';
import { SegmentKinds1764101500000 } from './1764101500000-SegmentKinds.js';
import { SegmentKindsVersion1764101600000 } from './1764101600000-SegmentKindsVersion.js';
import { StandingInstructions1764101700000 } from './1764101700000-StandingInstructions.js';
import { MessagesReadersImmutable1764101800000 } from './1764101800000-MessagesReadersImmutable.js';
import { FactSupersederFamilyView1764101900000 } from './1764101900000-FactSupersederFamilyView.js';
import { FactRestatedFamilyConfidence1764102000000 } from './1764102000000-FactRestatedFamilyConfidence.js';
import { LegacyArchives1764102100000 } from './1764102100000-LegacyArchives.js';
import { SummarySetAsides1764102380000 } from './1764102380000-SummarySetAsides.js';
import { RevokedTokens1764102600000 } from './1764102600000-RevokedTokens.js';
import { MemoryFences1764102610000 } from './1764102610000-MemoryFences.js';

/**
 * Every migration, in order. Listed explicitly because TypeORM's file globs do not load under
 * ES modules in Jest; `npm run migration:generate` prints the line to add here.
 */
export const MIGRATIONS = [
  Foundation1763800000000,
  Jobs1763800100000,
  Embeddings1763800200000,
  AgentReplies1763800300000,
  EventPayloads1763800310000,
  ConversationChunks1763800400000,
  Facts1763800410000,
  Memories1763800500000,
  Search1763800600000,
  ModelCalls1763900000000,
  CursorPrecision1764000000000,
  FactPrivacy1764000100000,
  FactPurge1764000110000,
  MetricsTextAndRetention1764000120000,
  InvitationConsentAndQuotas1764000300000,
  AuditLog1764000400000,
  InlineVectors1764000500000,
  PeriodSummaries1764100000000,
  PlaceholderTurns1764100100000,
  Stories1764100200000,
  StoryFacts1764100300000,
  ImportedConversations1764100400000,
  FactRemovalPrivacy1764100500000,
  MemorySignals1764100600000,
  Profiles1764100700000,
  ChatMemoryActions1764100800000,
  TogetherConversations1764100900000,
  SegmentToldTime1764101000000,
  FactReleaseSharedCount1764101100000,
  FactFamilyView1764101200000,
  RepliesAnsweredAlone1764101300000,
  FactRevivedDetail1764101400000,
  SegmentKinds1764101500000,
  SegmentKindsVersion1764101600000,
  StandingInstructions1764101700000,
  MessagesReadersImmutable1764101800000,
  FactSupersederFamilyView1764101900000,
  FactRestatedFamilyConfidence1764102000000,
  LegacyArchives1764102100000,
  SummarySetAsides1764102380000,
  RevokedTokens1764102600000,
  MemoryFences1764102610000,
];
