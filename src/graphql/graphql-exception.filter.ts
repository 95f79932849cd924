import { Catch } from '@nestjs/common';
import { GqlExceptionFilter } from '@nestjs/graphql';

/**
 * Hands every resolver error to Apollo untouched, so `format-error.ts` alone decides what the
 * client sees (and Nest does not log expected domain errors as crashes).
 */
@Catch()
export class GraphqlExceptionFilter implements GqlExceptionFilter {
  catch(exception: unknown): unknown {
    return exception;
  }
}
