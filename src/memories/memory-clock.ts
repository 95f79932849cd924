import { Injectable } from '@nestjs/common';

/**
 * The time every memory rule reads (creation, references, the undo window, retention, the
 * extraction rate limit). Injected so tests can move it by replacing `now` on the instance.
 */
@Injectable()
export class MemoryClock {
  now(): Date {
    return new Date();
  }
}
