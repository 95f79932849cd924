import { Field, GraphQLISODateTime, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { ConnectionType } from '../../common/pagination/connection.js';

export enum SummaryPeriod {
  WEEK = 'WEEK',
  MONTH = 'MONTH',
  YEAR = 'YEAR',
}
registerEnumType(SummaryPeriod, {
  name: 'SummaryPeriod',
  description: 'An ISO week (Monday first), a calendar month or a year, in your time zone.',
});

export enum PeriodSummaryOutcome {
  STORED = 'STORED',
  EMPTY = 'EMPTY',
  QUEUED = 'QUEUED',
}
registerEnumType(PeriodSummaryOutcome, {
  name: 'PeriodSummaryOutcome',
  description:
    'STORED: the summary was written. EMPTY: no conversation in the period, nothing stored. QUEUED: the language model is unavailable or your model budget is spent; it is built in the background and arrives on periodSummaryAdded.',
});

@ObjectType('PeriodSummary', {
  description:
    'Your look back on a week, month or year of your conversations in a legacy. Private to you.',
})
export class PeriodSummaryModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  legacyId: string;

  @Field(() => SummaryPeriod)
  period: SummaryPeriod;

  @Field({ description: 'Its first day (YYYY-MM-DD) in timeZone.' })
  start: string;

  @Field({ description: 'Its last day (YYYY-MM-DD), included.' })
  end: string;

  @Field({ description: 'The time zone its dates are in (yours when it was built).' })
  timeZone: string;

  @Field()
  summary: string;

  @Field(() => String, { nullable: true })
  emotionalTone: string | null;

  @Field(() => [String])
  keyThemes: string[];

  @Field(() => [String], { description: 'What came back across conversations, weeks or months.' })
  recurringPatterns: string[];

  @Field(() => [String])
  people: string[];

  @Field(() => [String])
  places: string[];

  @Field(() => Int)
  conversationCount: number;

  @Field(() => Int)
  turnCount: number;

  @Field(() => [ID], {
    description: 'Provenance of a week: the conversation summaries it was built from.',
  })
  sourceChunkIds: string[];

  @Field(() => [ID], {
    description: 'Provenance of a month or year: the weeks or months it was built from.',
  })
  sourcePeriodIds: string[];

  @Field(() => [ID], { description: 'Your conversations with a turn in the period.' })
  conversationIds: string[];

  @Field({
    description:
      'True when assembled offline by heuristics from what is stored (counts, themes, the most central sentences), not written by a language model.',
  })
  aggregated: boolean;

  @Field()
  model: string;

  @Field(() => String, { nullable: true })
  promptVersion: string | null;

  @Field({ description: 'A conversation it was built from was deleted: it is being rebuilt.' })
  stale: boolean;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;

  @Field(() => GraphQLISODateTime)
  updatedAt: Date;
}

@ObjectType('PeriodSummaryConnection')
export class PeriodSummaryConnection extends ConnectionType(PeriodSummaryModel, 'PeriodSummary') {}

@ObjectType('SummarizePeriodPayload')
export class SummarizePeriodPayload {
  @Field(() => PeriodSummaryOutcome)
  outcome: PeriodSummaryOutcome;

  @Field(() => PeriodSummaryModel, { nullable: true })
  periodSummary: PeriodSummaryModel | null;
}

@ObjectType('PeriodSummaryProgress', {
  description: 'A backfill: the periods it queued and how many are done.',
})
export class PeriodSummaryProgressModel {
  @Field(() => ID)
  id: string;

  @Field(() => ID)
  legacyId: string;

  @Field()
  from: string;

  @Field()
  to: string;

  @Field(() => Int, {
    description:
      'Periods queued: every ended one in the range but those you deleted (an unchanged one is not summarized again).',
  })
  total: number;

  @Field(() => Int, { description: 'Periods summarized.' })
  stored: number;

  @Field(() => Int, { description: 'Periods with no conversation: nothing stored.' })
  empty: number;

  @Field(() => Int, {
    description: 'Periods left alone: deleted by you meanwhile, or you left the legacy.',
  })
  skipped: number;

  @Field(() => Int)
  pending: number;

  @Field()
  done: boolean;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;
}

@ObjectType('YearSide', { description: 'One side of compareYears.' })
export class YearSideModel {
  @Field(() => Int)
  year: number;

  @Field(() => String, { nullable: true })
  emotionalTone: string | null;

  @Field(() => Int)
  conversationCount: number;

  @Field(() => Int)
  turnCount: number;

  @Field(() => [String])
  themes: string[];

  @Field(() => [String])
  people: string[];

  @Field(() => [String])
  places: string[];

  @Field(() => [PeriodSummaryModel], {
    description: 'The stored summaries this side was composed from.',
  })
  summaries: PeriodSummaryModel[];
}

@ObjectType('YearComparison', {
  description:
    'The same month (or the whole year) of two years side by side, composed from stored period summaries only.',
})
export class YearComparisonModel {
  @Field(() => Int)
  year: number;

  @Field(() => Int)
  otherYear: number;

  @Field(() => Int, { nullable: true })
  month: number | null;

  @Field({ description: 'What changed, in a few sentences.' })
  text: string;

  @Field(() => YearSideModel)
  current: YearSideModel;

  @Field(() => YearSideModel)
  other: YearSideModel;

  @Field(() => [String], { description: 'Themes of both years.' })
  sharedThemes: string[];

  @Field(() => [String], { description: 'Themes of `year` that `otherYear` did not have.' })
  newThemes: string[];

  @Field(() => [String], { description: 'Themes of `otherYear` that `year` no longer has.' })
  fadedThemes: string[];
}
