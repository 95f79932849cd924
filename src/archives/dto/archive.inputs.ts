import { ArgsType, Field, ID } from '@nestjs/graphql';
import { IsEnum, IsOptional, IsUUID } from 'class-validator';
import { ForwardPageArgs } from '../../common/pagination/connection.js';
import { ArchiveKind } from '../archive.enums.js';

@ArgsType()
export class LegacyArchivesArgs extends ForwardPageArgs {
  @Field(() => ID, { nullable: true, description: 'Only the exports of this legacy.' })
  @IsOptional()
  @IsUUID('all', { message: 'legacyId must be an id.' })
  legacyId?: string | null;

  @Field(() => ArchiveKind, { nullable: true })
  @IsOptional()
  @IsEnum(ArchiveKind)
  kind?: ArchiveKind | null;
}
