import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { CommonException } from '../errors/domain.exception.js';
import { isUuid } from './uuid.js';

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
