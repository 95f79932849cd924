import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { InProcessEventBus } from './in-process-event-bus.js';

describe('publishing after commit', () => {
  afterEach(() => jest.restoreAllMocks());

  it('delivers the event to subscribers', async () => {
    const bus = new InProcessEventBus();
    const events = bus.subscribe<{ n: number }>('topic');
    const next = events.next();
    await bus.publishAfterCommit('topic', { n: 1 }, 'test event');
    expect((await next).value).toEqual({ n: 1 });
    await events.return?.();
  });

  it('publishes an event made with a transaction when told it committed, not before', async () => {
    const bus = new InProcessEventBus();
    const events = bus.subscribe<{ n: number }>('topic');
    const next = events.next();
    let received: { n: number } | undefined;
    void next.then((r) => (received = r.value as { n: number }));
    const committed = await bus.publishWith({} as EntityManager, 'topic', { n: 2 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toBeUndefined();
    await committed();
    expect((await next).value).toEqual({ n: 2 });
    await events.return?.();
  });

  it('logs a failed publish as not published, and never throws it', async () => {
    const bus = new InProcessEventBus();
    jest.spyOn(bus, 'publish').mockRejectedValue(new Error('bus down'));
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    await expect(bus.publishAfterCommit('topic', {}, 'test event')).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith({
      msg: 'test event not published',
      error: 'Error: bus down',
    });
  });
});
