import { Field, Float, GraphQLISODateTime, ID, Int, ObjectType } from '@nestjs/graphql';
import type { ContextSectionName, ContextSourceType } from '../context.types.js';
import type { PathName, SearchScope } from '../../search/search.types.js';
import type { WidenReason as WidenReasonValue } from '../../search/hybrid-search.service.js';
import {
  CandidateScope,
  ContextSectionKind,
  SearchFusion,
  SearchPath,
  SourceType,
  WidenReason,
} from './context-enums.model.js';
import { ProvenanceModel, ScoreComponentModel } from './context.model.js';

@ObjectType('RetrievalPathHit')
export class PathHitModel {
  @Field(() => SearchPath)
  path: PathName;

  @Field(() => Float)
  score: number;

  @Field(() => Int, { description: 'Rank within the path and source, from 1.' })
  rank: number;

  @Field(() => Float, { nullable: true, description: 'The raw full-text rank (lexical).' })
  raw: number | null;
}

@ObjectType('RetrievalCandidate', {
  description:
    'A candidate of one retrieval, with its scores and what became of it. It has no id: its scores belong to this retrieval; `recallItemId` names the item.',
})
export class RetrievalCandidateModel {
  @Field(() => SourceType)
  sourceType: ContextSourceType;

  @Field(() => ID, { description: 'The RecallItem it is (its id).' })
  recallItemId: string;

  @Field(() => ID, { description: "The item's own record (see ItemProvenance.sourceId)." })
  sourceId: string;

  @Field(() => CandidateScope)
  scope: SearchScope | 'provider';

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

  @Field(() => ContextSectionKind, {
    nullable: true,
    description: 'The section it was placed in (or, dropped, meant for).',
  })
  section: ContextSectionName | null;

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

  @Field({
    description:
      "Whether the message asks for a summary or recap (the agent's replies not lowered).",
  })
  asksSummary: boolean;

  @Field(() => String, { nullable: true })
  timeExpression: string | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  timeFrom: Date | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  timeTo: Date | null;

  @Field(() => GraphQLISODateTime, { description: 'The conversation clock.' })
  clock: Date;

  @Field(() => SearchFusion)
  fusion: 'weighted' | 'rrf';

  @Field()
  hybrid: boolean;

  @Field(() => Int)
  goodHits: number;

  @Field()
  widened: boolean;

  @Field(() => WidenReason, { nullable: true })
  widenReason: WidenReasonValue | null;

  @Field({ description: 'The trigram fallback ran.' })
  fallback: boolean;

  @Field(() => [SearchPath], { description: 'Paths that could not run: dense, lexical.' })
  degraded: PathName[];

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
