import { DomainException, PublicErrorCode } from '../common/errors/domain.exception.js';

export enum PeriodSummaryErrorCode {
  PERIOD_SUMMARY_NOT_FOUND = 'PERIOD_SUMMARY_NOT_FOUND',
  BACKFILL_NOT_FOUND = 'BACKFILL_NOT_FOUND',
  INVALID_PERIOD_START = 'INVALID_PERIOD_START',
  PERIOD_NOT_ENDED = 'PERIOD_NOT_ENDED',
  INVALID_RANGE = 'INVALID_RANGE',
}

const CODES: Record<PeriodSummaryErrorCode, PublicErrorCode> = {
  PERIOD_SUMMARY_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  BACKFILL_NOT_FOUND: PublicErrorCode.NOT_FOUND,
  INVALID_PERIOD_START: PublicErrorCode.BAD_USER_INPUT,
  PERIOD_NOT_ENDED: PublicErrorCode.BAD_USER_INPUT,
  INVALID_RANGE: PublicErrorCode.BAD_USER_INPUT,
};

export class PeriodSummaryException extends DomainException {
  constructor(code: PeriodSummaryErrorCode, message: string, field?: string) {
    super(CODES[code], code, message, field);
  }

  static notFound(): PeriodSummaryException {
    return new PeriodSummaryException(
      PeriodSummaryErrorCode.PERIOD_SUMMARY_NOT_FOUND,
      'Period summary not found.',
    );
  }
}
