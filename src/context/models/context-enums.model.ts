import { registerEnumType } from '@nestjs/graphql';

/** What a remembered item is: the closed set behind every `sourceType` of the API. */
export enum SourceType {
  FACT = 'FACT',
  MEMORY = 'MEMORY',
  PERIOD_SUMMARY = 'PERIOD_SUMMARY',
  PROFILE = 'PROFILE',
  STORY = 'STORY',
  SUMMARY = 'SUMMARY',
  TURN = 'TURN',
}
registerEnumType(SourceType, {
  name: 'SourceType',
  description: 'What a remembered item is.',
  valuesMap: {
    FACT: { description: 'A fact about the legacy.' },
    MEMORY: { description: 'One of your memories.' },
    PERIOD_SUMMARY: { description: 'One of your weekly, monthly or yearly summaries.' },
    PROFILE: { description: 'An entry of your profile (with your consent).' },
    STORY: { description: 'A passage of a story or document.' },
    SUMMARY: { description: 'A summary of a stretch of a conversation.' },
    TURN: { description: 'A turn of a conversation (one passage of it).' },
  },
});

/**
 * The sections of the agent's context. The values the code uses are the lower-case names of
 * context.types.ts; clients read them as the enum's names.
 */
export enum ContextSectionKind {
  FACTS = 'facts',
  PROFILE = 'profile',
  MEMORIES = 'memories',
  PERIODS = 'periods',
  STORIES = 'stories',
  SUMMARIES = 'summaries',
  TURNS = 'turns',
}
registerEnumType(ContextSectionKind, {
  name: 'ContextSectionName',
  description: "A section of the agent's context, in the order they are given to the model.",
});

/** How the search's paths were fused (SEARCH_FUSION). */
export enum SearchFusion {
  WEIGHTED = 'weighted',
  RRF = 'rrf',
}
registerEnumType(SearchFusion, {
  name: 'SearchFusion',
  description: 'WEIGHTED: a weighted sum of the paths; RRF: reciprocal rank fusion.',
});

/** Why a retrieval widened beyond the current conversation. */
export enum WidenReason {
  FEW_GOOD_HITS = 'few_good_hits',
  REFERS_BACK = 'refers_back',
  RECALL = 'recall',
}
registerEnumType(WidenReason, {
  name: 'WidenReason',
  description:
    'FEW_GOOD_HITS: the conversation had too few good hits; REFERS_BACK: the message refers to earlier conversations; RECALL: a recall, which searches everything at once.',
});

/** A path of the hybrid search. */
export enum SearchPath {
  DENSE = 'dense',
  LEXICAL = 'lexical',
  TRIGRAM = 'trigram',
  TIME = 'time',
  STANDING = 'standing',
}
registerEnumType(SearchPath, { name: 'SearchPath' });

/** Where a retrieval candidate was found. */
export enum CandidateScope {
  CURRENT = 'current',
  WIDER = 'wider',
  PROVIDER = 'provider',
}
registerEnumType(CandidateScope, {
  name: 'CandidateScope',
  description:
    'CURRENT: this conversation; WIDER: found after widening; PROVIDER: ranked by the facts, memories, profile or periods section itself.',
});
