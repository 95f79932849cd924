import { Field, Float, GraphQLISODateTime, ID, Int, ObjectType } from '@nestjs/graphql';
import { ConnectionType } from '../../common/pagination/connection.js';
import { ArchiveKind, ArchiveStatus } from '../archive.enums.js';

@ObjectType('LegacyArchiveCounts', { description: 'What an archive holds, by kind of item.' })
export class LegacyArchiveCountsModel {
  @Field(() => Int)
  facts: number;

  @Field(() => Int)
  stories: number;

  @Field(() => Int)
  conversations: number;

  @Field(() => Int)
  turns: number;

  @Field(() => Int)
  memories: number;

  @Field(() => Int)
  periodSummaries: number;
}

@ObjectType('LegacyArchive', {
  description:
    'A legacy archive: an export of what you may see of a legacy (a ZIP to download), or an archive you uploaded, imported as a new legacy you own. Yours alone.',
})
export class LegacyArchiveModel {
  @Field(() => ID)
  id: string;

  @Field(() => ArchiveKind)
  kind: ArchiveKind;

  @Field(() => ArchiveStatus)
  status: ArchiveStatus;

  @Field(() => ID, {
    nullable: true,
    description: 'EXPORT: the legacy exported. IMPORT: the legacy made, once the import began.',
  })
  legacyId: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'What is being done: facts, stories, conversations, memories, periodSummaries, writing or storing (an export), or the part being imported (facts, stories, conversations, turns, memories, periodSummaries).',
  })
  stage: string | null;

  @Field(() => Int, { description: 'Steps done: stages of an export, items of an import.' })
  done: number;

  @Field(() => Int, { description: 'Steps in all.' })
  total: number;

  @Field(() => Float, { description: 'done / total, from 0 to 1 (1 once COMPLETED).' })
  progress: number;

  @Field(() => LegacyArchiveCountsModel, {
    description:
      'An export: what it holds so far (all of it once COMPLETED). An import: what the archive holds.',
  })
  counts: LegacyArchiveCountsModel;

  @Field(() => String, { nullable: true, description: 'The name the ZIP is downloaded under.' })
  fileName: string | null;

  @Field(() => Float, { nullable: true, description: 'Bytes of the ZIP.' })
  sizeBytes: number | null;

  @Field(() => String, {
    nullable: true,
    description:
      'A COMPLETED export: where to GET the ZIP, with the same Authorization as GraphQL (relative to the service).',
  })
  downloadUrl: string | null;

  @Field(() => String, { nullable: true, description: 'FAILED: the stable reason code.' })
  failureCode: string | null;

  @Field(() => String, { nullable: true, description: 'FAILED: what went wrong, in words.' })
  failureReason: string | null;

  @Field(() => GraphQLISODateTime)
  createdAt: Date;

  @Field(() => GraphQLISODateTime, { nullable: true })
  finishedAt: Date | null;

  @Field(() => GraphQLISODateTime, {
    description: 'When the ZIP (or the upload) is deleted (ARCHIVE_KEEP after it was made).',
  })
  expiresAt: Date;
}

@ObjectType()
export class LegacyArchiveConnection extends ConnectionType(LegacyArchiveModel, 'LegacyArchive') {}
