import { jest } from '@jest/globals';
import { NotFoundException } from '@nestjs/common';
import { InProcessEventBus } from '../pubsub/in-process-event-bus.js';
import { Loaders } from './loaders.js';
import type { RequestContext } from './request-context.js';
import { boundToSession, SubscriptionEnded, unlessEnded } from './session-bound.js';

function context(expiresInMs: number | null): RequestContext {
  return {
    requestId: 'r',
    token: 't',
    loaders: new Loaders(),
    transport: 'ws',
    user: { id: 'me' } as RequestContext['user'],
    ...(expiresInMs === null ? {} : { tokenExpiresAt: new Date(Date.now() + expiresInMs) }),
  };
}

const tick = () => new Promise((r) => setTimeout(r, 20));

describe('boundToSession', () => {
  it('delivers events while the check passes, and ends with its error when it fails', async () => {
    const bus = new InProcessEventBus();
    let allowed = true;
    const events = boundToSession(bus, context(60_000), bus.subscribe<number>('t'), {
      check: async () => {
        if (!allowed) throw new NotFoundException('gone');
      },
    });
    const first = events.next();
    await tick();
    await bus.publish('t', 1);
    expect(await first).toEqual({ done: false, value: 1 });
    allowed = false;
    const second = events.next();
    await bus.publish('t', 2);
    const ended = await second;
    expect(ended.value).toBeInstanceOf(SubscriptionEnded);
    expect(() => unlessEnded((n: number) => n)(ended.value as SubscriptionEnded)).toThrow('gone');
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });

  it('trusts a passed check for trustPassedCheckMs, not across a revocation signal', async () => {
    const bus = new InProcessEventBus();
    let checks = 0;
    let allowed = true;
    const events = boundToSession(bus, context(60_000), bus.subscribe<number>('t'), {
      check: async () => {
        checks += 1;
        if (!allowed) throw new NotFoundException('gone');
      },
      revokedBy: ['revoked'],
      trustPassedCheckMs: 60_000,
    });
    for (const n of [1, 2, 3]) {
      const next = events.next();
      await tick();
      await bus.publish('t', n);
      expect(await next).toEqual({ done: false, value: n });
    }
    expect(checks).toBe(1);
    allowed = false;
    const next = events.next();
    await tick();
    await bus.publish('revoked', {});
    expect((await next).value).toBeInstanceOf(SubscriptionEnded);
    expect(checks).toBe(2);
  });

  it('ends with TOKEN_EXPIRED when the token expires, with no event needed', async () => {
    const bus = new InProcessEventBus();
    const events = boundToSession(bus, context(50), bus.subscribe<number>('t'), {
      check: async () => undefined,
    });
    const ended = await events.next();
    expect(ended.value).toBeInstanceOf(SubscriptionEnded);
    expect((ended.value as SubscriptionEnded).error).toMatchObject({
      publicCode: 'UNAUTHENTICATED',
      reason: 'TOKEN_EXPIRED',
    });
  });

  it('does not end early for a token expiring beyond the longest timer delay', async () => {
    const bus = new InProcessEventBus();
    const events = boundToSession(bus, context(40 * 86_400_000), bus.subscribe<number>('t'), {
      check: async () => undefined,
    });
    const next = events.next();
    await tick();
    await bus.publish('t', 7);
    expect(await next).toEqual({ done: false, value: 7 });
    await events.return!();
  });

  it('re-checks on a revocation signal for this user or everyone, not for someone else', async () => {
    const bus = new InProcessEventBus();
    let checks = 0;
    let allowed = true;
    const events = boundToSession(bus, context(60_000), bus.subscribe<number>('t'), {
      check: async (event) => {
        if (event === null) checks += 1;
        if (!allowed) throw new NotFoundException('removed');
      },
      revokedBy: ['revoked'],
    });
    const next = events.next();
    await tick();
    await bus.publish('revoked', { userId: 'someone-else' });
    await tick();
    expect(checks).toBe(0);
    await bus.publish('revoked', { userId: null });
    await tick();
    expect(checks).toBe(1);
    allowed = false;
    await bus.publish('revoked', { userId: 'me' });
    const ended = await next;
    expect(checks).toBe(2);
    expect((ended.value as SubscriptionEnded).error).toBeInstanceOf(NotFoundException);
  });

  it('closes the source and its listeners when the client unsubscribes', async () => {
    const bus = new InProcessEventBus();
    const closed: string[] = [];
    const subscribe = bus.subscribe.bind(bus);
    jest.spyOn(bus, 'subscribe').mockImplementation(<T>(topic: string) => {
      const inner = subscribe<T>(topic);
      return Object.assign(inner, {
        return: async () => {
          closed.push(topic);
          return (await Object.getPrototypeOf(inner).return.call(inner)) as IteratorResult<T>;
        },
      });
    });
    const events = boundToSession(bus, context(60_000), bus.subscribe<number>('t'), {
      check: async () => undefined,
      revokedBy: ['revoked'],
    });
    const pending = events.next();
    await tick();
    await events.return!();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(closed.sort()).toEqual(['revoked', 't']);
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });
});
