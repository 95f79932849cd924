import { Field, Float, GraphQLISODateTime, ID, Int, ObjectType } from '@nestjs/graphql';
import { JSONObjectScalar } from '../../common/scalars/json.scalar.js';
import { MessageModel } from '../../conversations/models/conversation.model.js';

@ObjectType('ScoreComponent', {
  description:
    'One component of a ranking score: dense (cosine similarity), lexical (full-text rank divided by the best of its source), trigram, identifier (share of the query identifiers found), time (fit to a time expression), code (code boost), neighbor (best adjacent turn), base, rrf, final.',
})
export class ScoreComponentModel {
  @Field()
  name: string;

  @Field(() => Float)
  value: number;
}

@ObjectType('TurnRange', { description: 'Turn indexes, both ends included.' })
export class TurnRangeModel {
  @Field(() => Int)
  start: number;

  @Field(() => Int)
  end: number;
}

@ObjectType('ItemProvenance', { description: 'Where a retrieved item came from.' })
export class ProvenanceModel {
  @Field({ description: 'FACT, MEMORY, SUMMARY or TURN.' })
  sourceType: string;

  @Field(() => ID, { description: 'The fact, memory, summary or turn segment.' })
  id: string;

  @Field(() => ID, { nullable: true })
  conversationId: string | null;

  @Field(() => [ID], { description: 'The turns it came from (yours only).' })
  messageIds: string[];

  @Field(() => [JSONObjectScalar], {
    description:
      "Each cited turn's metadata, in the order of messageIds: an imported turn's own id comes back here.",
  })
  messageMetadata: Record<string, unknown>[];

  @Field(() => TurnRangeModel, { nullable: true })
  turnRange: TurnRangeModel | null;

  @Field(() => GraphQLISODateTime, {
    nullable: true,
    description: 'When it was said (the end of the range for a summary).',
  })
  occurredAt: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  createdAt: Date | null;
}

@ObjectType('ContextItem', { description: 'A retrieved item as given to the model.' })
export class ContextItemModel {
  @Field({ description: 'FACT, MEMORY, SUMMARY or TURN.' })
  sourceType: string;

  @Field(() => ID)
  id: string;

  @Field({ description: 'The context section it is in.' })
  section: string;

  @Field({ description: 'The text given to the model.' })
  text: string;

  @Field(() => Int)
  tokens: number;

  @Field(() => Float, { description: 'The final ranking score within its section.' })
  score: number;

  @Field(() => [ScoreComponentModel])
  scores: ScoreComponentModel[];

  @Field({ description: 'A code chunk.' })
  isCode: boolean;

  @Field(() => ProvenanceModel)
  provenance: ProvenanceModel;
}

@ObjectType('ContextSection')
export class ContextSectionModel {
  @Field({ description: 'facts, memories, summaries or turns.' })
  name: string;

  @Field()
  title: string;

  @Field(() => Int, { description: 'Tokens of the section, heading included.' })
  tokens: number;

  @Field(() => [ContextItemModel])
  items: ContextItemModel[];
}

@ObjectType('AssembledContext', {
  description:
    'What the agent would be given for this message: the persona, the retrieved sections within the token budget and the recent window.',
})
export class AssembledContextModel {
  @Field()
  persona: string;

  @Field({ description: 'The system prompt: the persona followed by the sections.' })
  system: string;

  @Field(() => [ContextSectionModel])
  sections: ContextSectionModel[];

  @Field(() => [ContextItemModel], { description: 'Every item of the sections, in order.' })
  items: ContextItemModel[];

  @Field(() => Int, { description: 'Tokens of the retrieved sections (what the budget covers).' })
  tokenCount: number;

  @Field(() => Int)
  budget: number;

  @Field({ description: 'Whether a candidate was left out for lack of budget.' })
  truncated: boolean;

  @Field(() => [MessageModel], { description: 'The recent window, oldest first.' })
  recent: MessageModel[];
}

@ObjectType('RecallItem', {
  description: 'Something Keepsake remembers, from your memories, facts, summaries or turns.',
})
export class RecallItemModel {
  @Field(() => ID, {
    description: 'Stable: the source type and the source id (pass it to forgetRecallItem).',
  })
  id: string;

  @Field({ description: 'FACT, MEMORY, SUMMARY or TURN.' })
  sourceType: string;

  @Field(() => ID)
  sourceId: string;

  @Field()
  text: string;

  @Field(() => Float)
  score: number;

  @Field(() => [ScoreComponentModel])
  scores: ScoreComponentModel[];

  @Field({
    description:
      'Whether you can forget it from here: your memories, and facts you wrote. Summaries and turns are part of the conversation log and cannot be forgotten one by one.',
  })
  forgettable: boolean;

  @Field(() => ProvenanceModel)
  provenance: ProvenanceModel;
}

@ObjectType('ForgetRecallItemPayload')
export class ForgetRecallItemPayload {
  @Field(() => ID)
  id: string;

  @Field()
  sourceType: string;

  @Field({ description: 'A memory is forgotten (restorable for a while); a fact deleted.' })
  forgotten: boolean;
}

@ObjectType('RetrievalPathHit')
export class PathHitModel {
  @Field({ description: 'dense, lexical, trigram or time.' })
  path: string;

  @Field(() => Float)
  score: number;

  @Field(() => Int, { description: 'Rank within the path and source, from 1.' })
  rank: number;

  @Field(() => Float, { nullable: true, description: 'The raw full-text rank (lexical).' })
  raw: number | null;
}

@ObjectType('RetrievalCandidate', {
  description: 'A candidate of one retrieval, with its scores and what became of it.',
})
export class RetrievalCandidateModel {
  @Field()
  sourceType: string;

  @Field(() => ID)
  id: string;

  @Field({
    description:
      'current (this conversation), wider (after widening) or provider (ranked by the facts or memories module).',
  })
  scope: string;

  @Field(() => [PathHitModel])
  paths: PathHitModel[];

  @Field(() => [ScoreComponentModel])
  scores: ScoreComponentModel[];

  @Field(() => Float)
  score: number;

  @Field({ description: 'Counted as a good hit for the widening decision.' })
  good: boolean;

  @Field()
  kept: boolean;

  @Field(() => String, { nullable: true, description: 'The section it was placed in.' })
  section: string | null;

  @Field({ description: 'Why it was kept or dropped.' })
  reason: string;

  @Field()
  text: string;

  @Field(() => Int)
  tokens: number;

  @Field(() => ProvenanceModel, { nullable: true })
  provenance: ProvenanceModel | null;
}

@ObjectType('RetrievalDebug', {
  description: 'How the context for a message is retrieved and assembled, step by step.',
})
export class RetrievalDebugModel {
  @Field()
  query: string;

  @Field(() => [String], { description: 'Identifiers found in the query.' })
  identifiers: string[];

  @Field({ description: 'Whether the query is about code (code chunks preferred).' })
  codeQuery: boolean;

  @Field({ description: 'Whether the message refers back to earlier conversations.' })
  refersBack: boolean;

  @Field(() => String, { nullable: true })
  timeExpression: string | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  timeFrom: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  timeTo: Date | null;

  @Field(() => GraphQLISODateTime, { description: 'The conversation clock.' })
  clock: Date;

  @Field({ description: 'weighted or rrf.' })
  fusion: string;

  @Field()
  hybrid: boolean;

  @Field(() => Int)
  goodHits: number;

  @Field()
  widened: boolean;

  @Field(() => String, { nullable: true, description: 'few_good_hits or refers_back.' })
  widenReason: string | null;

  @Field({ description: 'The trigram fallback ran.' })
  fallback: boolean;

  @Field(() => [String], { description: 'Paths that could not run: dense, lexical.' })
  degraded: string[];

  @Field(() => String, { nullable: true })
  failedStage: string | null;

  @Field(() => Float)
  embedMs: number;

  @Field(() => Float)
  searchMs: number;

  @Field(() => Float)
  totalMs: number;

  @Field(() => Int)
  tokenCount: number;

  @Field(() => Int)
  budget: number;

  @Field()
  truncated: boolean;

  @Field(() => [RetrievalCandidateModel])
  candidates: RetrievalCandidateModel[];
}

@ObjectType('SourceShare')
export class SourceShareModel {
  @Field({ description: 'FACT, MEMORY, SUMMARY or TURN.' })
  sourceType: string;

  @Field(() => Int, { description: 'Items of this source given to the model.' })
  items: number;

  @Field(() => Float, { description: 'Their share of all items.' })
  share: number;
}

@ObjectType('PathHits')
export class PathHitsModel {
  @Field()
  path: string;

  @Field(() => Int)
  hits: number;
}

@ObjectType('MemoryMetricsReport', {
  description:
    'Retrieval over a period: context assemblies (replies and the context query) and recalls.',
})
export class MemoryMetricsReportModel {
  @Field(() => GraphQLISODateTime)
  from: Date;

  @Field(() => GraphQLISODateTime)
  to: Date;

  @Field(() => Int)
  assemblies: number;

  @Field(() => Int)
  recalls: number;

  @Field(() => Float, { description: 'Share of assemblies that retrieved at least one item.' })
  hitRate: number;

  @Field(() => Float, { description: 'Share that needed the trigram fallback.' })
  fallbackShare: number;

  @Field(() => Float, { description: 'Share that widened beyond the current conversation.' })
  wideningShare: number;

  @Field(() => Float, { description: 'Share that left a candidate out for lack of budget.' })
  truncationShare: number;

  @Field(() => Float, { description: 'Share that ran without a path (dense or lexical).' })
  degradedShare: number;

  @Field(() => Float, { description: 'Share where a stage failed.' })
  failureShare: number;

  @Field(() => Float)
  p50Ms: number;

  @Field(() => Float)
  p95Ms: number;

  @Field(() => Float)
  embedP50Ms: number;

  @Field(() => Float)
  embedP95Ms: number;

  @Field(() => Float)
  searchP50Ms: number;

  @Field(() => Float)
  searchP95Ms: number;

  @Field(() => Float)
  recallP50Ms: number;

  @Field(() => Float)
  recallP95Ms: number;

  @Field(() => Float, { description: 'Mean tokens of the retrieved sections.' })
  meanTokens: number;

  @Field(() => [PathHitsModel], { description: 'Candidates found by each path.' })
  hitsByPath: PathHitsModel[];

  @Field(() => [SourceShareModel], { description: 'Items given to the model, by source.' })
  composition: SourceShareModel[];
}
