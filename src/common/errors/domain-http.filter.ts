import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  Inject,
  Injectable,
  Logger,
  Optional,
} from '@nestjs/common';
import type { Response } from 'express';
import { DomainException, PUBLIC_CODES, PublicErrorCode } from './domain.exception.js';

/** Provided by the database module: what a failure of the database itself tells the client. */
export const DATABASE_FAILURES = Symbol('DATABASE_FAILURES');

export interface DatabaseFailures {
  /** The domain exception a database failure (gone, full) stands for, or null. */
  failure(err: unknown): DomainException | null;
}

/** A framework refusal's status as one of the stable codes (anything else is bad input). */
const HTTP_CODES: Record<number, PublicErrorCode> = {
  401: PublicErrorCode.UNAUTHENTICATED,
  403: PublicErrorCode.FORBIDDEN,
  404: PublicErrorCode.NOT_FOUND,
  409: PublicErrorCode.CONFLICT,
  429: PublicErrorCode.RATE_LIMITED,
};

/**
 * Errors of the plain HTTP routes in the shape GraphQL clients already read: `{ errors: [{
 * message, extensions: { code, reason, field } }] }`, with the matching status. Anything that
 * is not a domain exception is logged and answered without detail.
 */
@Injectable()
@Catch()
export class DomainHttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Http');

  constructor(
    @Optional() @Inject(DATABASE_FAILURES) private readonly failures?: DatabaseFailures,
  ) {}

  catch(caught: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const error =
      caught instanceof DomainException ? caught : (this.failures?.failure(caught) ?? caught);
    if (error instanceof DomainException) {
      if (error.retryAfterSeconds) res.setHeader('retry-after', String(error.retryAfterSeconds));
      res.status(PUBLIC_CODES[error.publicCode].status).json({
        errors: [
          {
            message: error.message,
            extensions: {
              code: error.publicCode,
              reason: error.reason,
              ...(error.field ? { field: error.field } : {}),
              ...(error.retryAfterSeconds ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
            },
          },
        ],
      });
      return;
    }
    if (error instanceof HttpException && error.getStatus() < 500) {
      // Framework-level refusals (a body over the size limit, a malformed multipart body).
      const status = error.getStatus();
      const code = HTTP_CODES[status] ?? PublicErrorCode.BAD_USER_INPUT;
      res.status(status).json({
        errors: [
          {
            message:
              status === 413
                ? 'The file is larger than this server accepts (DOCUMENT_MAX_BYTES).'
                : error.message,
            extensions: {
              code,
              ...(code === PublicErrorCode.BAD_USER_INPUT
                ? status === 413
                  ? { reason: 'TOO_LARGE', field: 'file' }
                  : { reason: 'INVALID_REQUEST', field: 'body' }
                : { reason: 'INVALID_REQUEST' }),
            },
          },
        ],
      });
      return;
    }
    this.logger.error({
      msg: 'unexpected error',
      error: error instanceof Error ? error.message : String(error),
      stack: error instanceof Error ? error.stack : undefined,
    });
    res.status(500).json({
      errors: [
        { message: 'Internal server error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } },
      ],
    });
  }
}
