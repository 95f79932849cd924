import {
  DomainException,
  PublicErrorCode,
  type ReasonTable,
} from '../common/errors/domain.exception.js';

export enum ConsoleErrorCode {
  CROSS_ORIGIN = 'CROSS_ORIGIN',
  INVALID_ID_TOKEN = 'INVALID_ID_TOKEN',
}

export const CONSOLE_REASONS: ReasonTable<ConsoleErrorCode> = {
  CROSS_ORIGIN: {
    code: PublicErrorCode.FORBIDDEN,
    means: "Only the console's own pages may open or end its session (/app/session).",
  },
  INVALID_ID_TOKEN: {
    code: PublicErrorCode.UNAUTHENTICATED,
    means:
      "The ID token sent to open the console's session is not the provider's for this client and person (signature, issuer, audience, expiry or subject).",
  },
};

/** The console's session routes' refusals. */
export class ConsoleException extends DomainException {
  constructor(code: ConsoleErrorCode, message: string, field?: string) {
    super(CONSOLE_REASONS[code].code, code, message, field);
  }
}
