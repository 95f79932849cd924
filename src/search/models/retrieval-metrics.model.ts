import {
  Field,
  Float,
  GraphQLISODateTime,
  Int,
  ObjectType,
  registerEnumType,
} from '@nestjs/graphql';
import type { UpgradeTriggerName } from '../../signals/upgrade-triggers.js';
import { SourceType } from '../../context/models/context-enums.model.js';

const UPGRADE_TRIGGER_NAMES: Record<UpgradeTriggerName, UpgradeTriggerName> = {
  FEW_FULL_TEXT_HITS: 'FEW_FULL_TEXT_HITS',
  FALLBACK: 'FALLBACK',
  SUMMARIES_ONLY: 'SUMMARIES_ONLY',
  TRUNCATION: 'TRUNCATION',
  P95_LATENCY: 'P95_LATENCY',
  SUMMARY_SPEND: 'SUMMARY_SPEND',
  FORGOT_COMPLAINTS: 'FORGOT_COMPLAINTS',
};
registerEnumType(UPGRADE_TRIGGER_NAMES, {
  name: 'UpgradeTriggerName',
  description: 'A measurement that says part of the memory design should be upgraded.',
});

@ObjectType('UpgradeTrigger', {
  description:
    'One upgrade trigger over the period: its value, its threshold (a configuration variable) and whether it fires.',
})
export class UpgradeTriggerModel {
  @Field(() => UPGRADE_TRIGGER_NAMES)
  name: UpgradeTriggerName;

  @Field(() => Float, { description: 'A share (0 to 1), milliseconds, or complaints a week.' })
  value: number;

  @Field(() => Float)
  threshold: number;

  @Field({ description: 'The value is over the threshold, on enough data.' })
  fires: boolean;

  @Field({
    description:
      'Enough data to judge: TRIGGER_MIN_ASSEMBLIES assemblies for shares and latency, some model spend for the spend share.',
  })
  enoughData: boolean;

  @Field({ description: 'The variable that sets the threshold.' })
  variable: string;

  @Field()
  description: string;

  @Field({ description: 'What to upgrade when it fires.' })
  suggestion: string;
}

@ObjectType('SourceShare')
export class SourceShareModel {
  @Field(() => SourceType)
  sourceType: SourceType;

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
    'Retrieval over a period: context assemblies (replies and the context query) and recalls, and the upgrade triggers.',
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

  @Field(() => [UpgradeTriggerModel], {
    description: 'The upgrade triggers, each with its value, threshold and whether it fires.',
  })
  triggers: UpgradeTriggerModel[];

  @Field(() => Float, {
    description: 'Share with fewer than TRIGGER_FULL_TEXT_MIN_HITS full-text hits.',
  })
  fewFullTextShare: number;

  @Field(() => Float, { description: 'Share whose retrieved items were all summaries.' })
  summariesOnlyShare: number;

  @Field(() => Int, { description: '"You forgot" complaints among the queries (user turns).' })
  complaints: number;

  @Field(() => Float, { description: 'Share of assemblies in the memory A/B holdout.' })
  holdoutShare: number;

  @Field(() => Float, { description: 'p95 of the dense path, in ms.' })
  denseP95Ms: number;

  @Field(() => Float, { description: 'p95 of the full-text path (with its statistics), in ms.' })
  lexicalP95Ms: number;

  @Field(() => Float, { description: 'p95 of the trigram fallback, in ms.' })
  trigramP95Ms: number;

  @Field(() => Float, { description: 'p95 of fusion and ranking, in ms.' })
  fusionP95Ms: number;

  @Field(() => Float, {
    description: 'Mean of the best dense similarity per assembly (those that had one).',
  })
  meanTopSimilarity: number;

  @Field(() => Float, { description: 'Language-model tokens spent on summaries.' })
  summaryTokens: number;

  @Field(() => Float, { description: 'Language-model tokens of every task (embeddings left out).' })
  modelTokens: number;

  @Field(() => Float, { description: 'summaryTokens / modelTokens (0 without spend).' })
  summarySpendShare: number;
}
