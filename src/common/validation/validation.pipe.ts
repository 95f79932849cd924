import { ValidationError, ValidationPipe } from '@nestjs/common';
import { CommonException } from '../errors/domain.exception.js';

function firstProblem(
  errors: ValidationError[],
  path: string[] = [],
): { field: string; message: string } {
  for (const error of errors) {
    const here = [...path, error.property];
    if (error.constraints && Object.keys(error.constraints).length > 0) {
      return { field: here.join('.'), message: Object.values(error.constraints)[0] };
    }
    if (error.children?.length) return firstProblem(error.children, here);
  }
  return { field: path.join('.') || 'input', message: 'Invalid input.' };
}

/** class-validator failures become BAD_USER_INPUT naming the offending field. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidUnknownValues: false,
    exceptionFactory: (errors) => {
      const { field, message } = firstProblem(errors);
      return CommonException.invalid(field, message);
    },
  });
}
