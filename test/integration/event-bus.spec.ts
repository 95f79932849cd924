import { PGlite, Transaction } from '@electric-sql/pglite';
import type { EntityManager } from 'typeorm';
import { EventPayloads1763800310000 } from '../../migrations/1763800310000-EventPayloads.js';
import { NotifyTransport } from '../../src/pubsub/notify-transport.js';
import { decodeEvent, encodeEvent, PostgresEventBus } from '../../src/pubsub/postgres-event-bus.js';

/**
 * The PostgreSQL event bus, with two bus instances standing for two Keepsake processes on one
 * database. PGlite speaks the same LISTEN/NOTIFY; only the connection handling differs from the
 * server transport.
 *
 * @pass embedded: it runs the bus on a PGlite of its own in either pass; the server's
 * LISTEN/NOTIFY transport is tested in notify-transport.spec.ts and multi-instance.e2e-spec.ts.
 */
class PGliteTransport implements NotifyTransport {
  constructor(private readonly db: PGlite) {}

  /** The transaction a publish was made with (a PGlite one, standing for TypeORM's manager). */
  private on(manager?: EntityManager): PGlite | Transaction {
    return (manager as unknown as Transaction | undefined) ?? this.db;
  }

  async notify(channel: string, payload: string, manager?: EntityManager) {
    await this.on(manager).query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  // PGlite's LISTEN lives in the database's own session: it never drops, so it never resumes.
  async listen(channel: string, onPayload: (payload: string) => void) {
    const stop = await this.db.listen(channel, onPayload);
    return () => stop();
  }

  async park(body: string, manager?: EntityManager) {
    const { rows } = await this.on(manager).query<{ id: string }>(
      'INSERT INTO event_payloads (body) VALUES ($1) RETURNING id',
      [body],
    );
    return rows[0].id;
  }

  async fetchParked(id: string) {
    const { rows } = await this.db.query<{ body: string }>(
      'SELECT body FROM event_payloads WHERE id = $1',
      [id],
    );
    return rows[0]?.body ?? null;
  }

  async pruneParked() {
    return (await this.db.query('DELETE FROM event_payloads')).rowCount ?? 0;
  }
}

/** Call before publishing: like graphql-subscriptions, the bus registers on the first next(). */
async function take<T>(iterator: AsyncIterableIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  while (out.length < n) {
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([
      iterator.next(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), 3000);
      }),
    ]).finally(() => clearTimeout(timer));
    out.push(next.value as T);
  }
  return out;
}

describe('PostgresEventBus', () => {
  let db: PGlite;
  let a: PostgresEventBus;
  let b: PostgresEventBus;

  beforeAll(async () => {
    db = await PGlite.create();
    await new EventPayloads1763800310000().up({
      query: (sql: string) => db.query(sql),
    } as never);
    a = new PostgresEventBus(new PGliteTransport(db));
    b = new PostgresEventBus(new PGliteTransport(db));
    await a.start();
    await b.start();
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await db.close();
  });

  it('delivers an event published by one instance to subscribers of another, dates intact', async () => {
    const sub = b.subscribe<{ id: string; createdAt: Date; content: string }>('conversation:1');
    const other = b.subscribe<unknown>('conversation:2');
    const createdAt = new Date('2026-11-22T08:00:00.000Z');
    const first = take(sub, 1);
    const second = take(other, 1);
    await a.publish('conversation:1', { id: 'm1', createdAt, content: '2026-11-22T08:00:00.000Z' });
    const [event] = await first;
    expect(event).toEqual({ id: 'm1', createdAt, content: '2026-11-22T08:00:00.000Z' });
    expect(event.createdAt).toBeInstanceOf(Date);
    // Topics are kept apart.
    await a.publish('conversation:2', { id: 'm2' });
    expect(await second).toEqual([{ id: 'm2' }]);
    await sub.return?.();
    await other.return?.();
  });

  it('keeps the order of events published one after another', async () => {
    const sub = b.subscribe<{ sequence: number }>('conversation:3:reply-deltas');
    const received = take(sub, 30);
    for (let sequence = 0; sequence < 30; sequence++) {
      await a.publish('conversation:3:reply-deltas', { sequence, text: `chunk ${sequence}` });
    }
    const events = await received;
    expect(events.map((e) => e.sequence)).toEqual([...Array(30).keys()]);
    await sub.return?.();
  });

  it('carries events larger than a NOTIFY payload through the parking table, in order', async () => {
    const sub = b.subscribe<{ content: string }>('conversation:4');
    const long = 'x'.repeat(20_000);
    const received = take(sub, 2);
    await a.publish('conversation:4', { content: long });
    await a.publish('conversation:4', { content: 'short' });
    const events = await received;
    expect(events.map((e) => e.content.length)).toEqual([20_000, 5]);
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM event_payloads');
    expect(rows[0].n).toBe(1);
    await sub.return?.();
  });

  it('delivers an event published with a transaction once it commits, never one rolled back', async () => {
    const events: number[] = [];
    const sub = b.subscribe<{ n: number; content: string }>('conversation:5');
    const reading = (async () => {
      for await (const event of sub) {
        events.push(event.n);
        if (events.length === 3) break;
      }
    })();
    const as = (tx: Transaction) => tx as unknown as EntityManager;
    const parked = async () =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM event_payloads')).rows[0].n;
    const parkedBefore = await parked();
    await expect(
      db.transaction(async (tx) => {
        await a.publishWith(as(tx), 'conversation:5', { n: 1, content: 'x'.repeat(20_000) });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // The large one's parked payload went with its transaction.
    expect(await parked()).toBe(parkedBefore);
    await db.transaction(async (tx) => {
      const delivered = await a.publishWith(as(tx), 'conversation:5', { n: 2, content: 'y' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Not before the commit.
      expect(events).toEqual([]);
      await delivered();
    });
    await db.transaction(async (tx) => {
      const delivered = await a.publishWith(as(tx), 'conversation:5', {
        n: 3,
        content: 'z'.repeat(20_000),
      });
      await delivered();
    });
    await a.publish('conversation:5', { n: 4, content: 'after' });
    await reading;
    expect(events).toEqual([2, 3, 4]);
  });

  it('round-trips nested dates and leaves look-alike objects alone', () => {
    const value = { at: [new Date(0)], nested: { $date: 'x', other: 1 } };
    expect(decodeEvent(encodeEvent(value))).toEqual(value);
  });
});
