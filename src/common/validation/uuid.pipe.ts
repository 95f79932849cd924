import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { CommonException } from '../errors/domain.exception.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** Rejects malformed ids up front, naming the argument, instead of failing in SQL. */
@Injectable()
export class UuidPipe implements PipeTransform<unknown, string> {
  transform(value: unknown, metadata: ArgumentMetadata): string {
    if (!isUuid(value)) {
      throw CommonException.invalid(metadata.data ?? 'id', 'This is not a valid id.');
    }
    return value.toLowerCase();
  }
}
