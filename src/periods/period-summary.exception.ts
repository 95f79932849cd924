import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum PeriodSummaryErrorCode {
  PERIOD_SUMMARY_NOT_FOUND = 'PERIOD_SUMMARY_NOT_FOUND',
  BACKFILL_NOT_FOUND = 'BACKFILL_NOT_FOUND',
  INVALID_PERIOD_START = 'INVALID_PERIOD_START',
  PERIOD_NOT_ENDED = 'PERIOD_NOT_ENDED',
  INVALID_RANGE = 'INVALID_RANGE',
}

export const PERIOD_SUMMARY_REASONS: ReasonTable<PeriodSummaryErrorCode> = {
  PERIOD_SUMMARY_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The period summary does not exist or is not yours (the same answer).',
  },
  BACKFILL_NOT_FOUND: {
    code: PublicErrorCode.NOT_FOUND,
    means: 'The backfill does not exist or is not yours.',
  },
  INVALID_PERIOD_START: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'The date does not start a week (a Monday), month or year.',
  },
  PERIOD_NOT_ENDED: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'The period has not ended yet in your time zone.',
  },
  INVALID_RANGE: {
    code: PublicErrorCode.BAD_USER_INPUT,
    means: 'A backfill range is reversed, in the future or too long.',
  },
};

export class PeriodSummaryException extends DomainException {
  constructor(code: PeriodSummaryErrorCode, message: string, field?: string) {
    super(PERIOD_SUMMARY_REASONS[code].code, code, message, field);
  }

  static notFound(): PeriodSummaryException {
    return new PeriodSummaryException(
      PeriodSummaryErrorCode.PERIOD_SUMMARY_NOT_FOUND,
      'Period summary not found.',
    );
  }
}
