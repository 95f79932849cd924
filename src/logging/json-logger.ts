import { LoggerService } from '@nestjs/common';
import { currentRequestId } from './request-context.storage.js';

const LEVELS = {
  debug: 10,
  verbose: 10,
  log: 20,
  info: 20,
  warn: 30,
  error: 40,
  fatal: 50,
  silent: 100,
};
export type LogLevelName = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/**
 * One JSON object per line on stdout, with the request id when there is one. Callers pass
 * structured fields; message text of conversations is never logged at info level.
 */
export class JsonLogger implements LoggerService {
  private readonly threshold: number;

  constructor(level: LogLevelName = 'info') {
    this.threshold = LEVELS[level];
  }

  private write(level: keyof typeof LEVELS, message: unknown, context?: unknown, extra?: unknown) {
    if (LEVELS[level] < this.threshold) return;
    const fields: Record<string, unknown> = {
      time: new Date().toISOString(),
      level: level === 'log' ? 'info' : level === 'verbose' ? 'debug' : level,
    };
    const requestId = currentRequestId();
    if (requestId) fields.requestId = requestId;
    if (typeof context === 'string') fields.context = context;
    if (message !== null && typeof message === 'object' && !(message instanceof Error)) {
      Object.assign(fields, message);
    } else if (message instanceof Error) {
      fields.msg = message.message;
      fields.stack = message.stack;
    } else {
      fields.msg = String(message);
    }
    if (typeof extra === 'string' && level === 'error') fields.stack = extra;
    process.stdout.write(`${JSON.stringify(fields)}\n`);
  }

  // Nest passes (message, context) or, for errors, (message, stack, context).
  log(message: unknown, context?: string) {
    this.write('log', message, context);
  }
  error(message: unknown, stackOrContext?: string, context?: string) {
    if (context) this.write('error', message, context, stackOrContext);
    else this.write('error', message, stackOrContext);
  }
  warn(message: unknown, context?: string) {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string) {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string) {
    this.write('verbose', message, context);
  }
  fatal(message: unknown, context?: string) {
    this.write('fatal', message, context);
  }
}
