import { Transform } from 'class-transformer';
import { IsDate, IsEnum, IsOptional, IsString, MaxLength } from 'class-validator';
import { StoryVisibility } from '../story.enums.js';

/** The multipart fields that may come with an uploaded document (all text, as forms send). */
export class UploadDocumentFields {
  @IsOptional()
  @IsString()
  @MaxLength(300)
  title?: string;

  @Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value))
  @IsOptional()
  @IsEnum(StoryVisibility, { message: 'visibility must be PRIVATE or SHARED.' })
  visibility?: StoryVisibility;

  @Transform(({ value }: { value: unknown }) =>
    value === '' || value === undefined ? undefined : new Date(String(value)),
  )
  @IsOptional()
  @IsDate({ message: 'occurredAt must be an ISO 8601 date.' })
  occurredAt?: Date;
}
