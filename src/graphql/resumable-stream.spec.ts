import { PubSub } from 'graphql-subscriptions';
import { resumeAfter, ResumeLog } from './resumable-stream.js';

interface Turn {
  turnIndex: number;
}

/** A log of turns 0..n-1 that grows as the test stores turns, and a live topic for them. */
function conversation(stored: number) {
  const turns: Turn[] = Array.from({ length: stored }, (_, i) => ({ turnIndex: i }));
  const pubsub = new PubSub();
  const reads: number[] = [];
  return {
    turns,
    reads,
    live: () => pubsub.asyncIterableIterator<Turn>('turns'),
    store: async (publish = true) => {
      const turn = { turnIndex: turns.length };
      turns.push(turn);
      if (publish) await pubsub.publish('turns', turn);
      return turn;
    },
    publish: (turn: Turn) => pubsub.publish('turns', turn),
    log: (after: number, pageSize = 2, beforeRead?: () => Promise<void>): ResumeLog<Turn> => ({
      start: async () => Math.min(after, turns.length - 1),
      after: async (index) => {
        reads.push(index);
        await beforeRead?.();
        return turns.filter((t) => t.turnIndex > index).slice(0, pageSize);
      },
      pageSize,
      indexOf: (t) => t.turnIndex,
    }),
  };
}

async function take(stream: AsyncIterableIterator<Turn>, n: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) out.push((await stream.next()).value.turnIndex);
  return out;
}

describe('resumeAfter', () => {
  it('sends the log after the index page by page, then live events', async () => {
    const c = conversation(5);
    const stream = resumeAfter(c.live(), c.log(1));
    expect(await take(stream, 3)).toEqual([2, 3, 4]);
    // Pages of two: 2-3, 4, then the short page ends the replay.
    expect(c.reads).toEqual([1, 3]);
    await c.store();
    expect(await take(stream, 1)).toEqual([5]);
    await stream.return!();
  });

  it('keeps live events that arrive while the log is read, and drops those the log gave', async () => {
    const c = conversation(3);
    // While the log is read, two turns are stored: one before the read sees it, one after.
    let stored = false;
    const stream = resumeAfter(
      c.live(),
      c.log(0, 10, async () => {
        if (stored) return;
        stored = true;
        await c.store(); // turn 3: in the log read and live
        const late = { turnIndex: c.turns.length };
        setTimeout(() => {
          c.turns.push(late);
          void c.publish(late); // turn 4: live only
        }, 0);
      }),
    );
    expect(await take(stream, 4)).toEqual([1, 2, 3, 4]);
    await c.store();
    expect(await take(stream, 1)).toEqual([5]);
    await stream.return!();
  });

  it('listens before it reads: a turn stored after the read arrives live', async () => {
    const c = conversation(2);
    const stream = resumeAfter(c.live(), c.log(-1));
    expect(await take(stream, 2)).toEqual([0, 1]);
    await c.store();
    expect(await take(stream, 1)).toEqual([2]);
    await stream.return!();
  });

  it('starts from the log’s end when the index is past it (a failover lost turns)', async () => {
    const c = conversation(3);
    const stream = resumeAfter(c.live(), c.log(40));
    const next = stream.next();
    await c.store();
    expect((await next).value).toEqual({ turnIndex: 3 });
    await stream.return!();
  });

  it('ends the live source when it is ended, even while it waits', async () => {
    const c = conversation(0);
    const stream = resumeAfter(c.live(), c.log(-1));
    const waiting = stream.next();
    await new Promise((r) => setImmediate(r));
    await stream.return!();
    expect(await waiting).toEqual({ done: true, value: undefined });
  });
});
