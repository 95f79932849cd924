import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum ConsoleErrorCode {
  CROSS_ORIGIN = 'CROSS_ORIGIN',
}

export const CONSOLE_REASONS: ReasonTable<ConsoleErrorCode> = {
  CROSS_ORIGIN: {
    code: PublicErrorCode.FORBIDDEN,
    means: "Only the console's own pages may open or end its session (/app/session).",
  },
};

/** The console's session routes' refusals. */
export class ConsoleException extends DomainException {
  constructor(code: ConsoleErrorCode, message: string, field?: string) {
    super(CONSOLE_REASONS[code].code, code, message, field);
  }
}
