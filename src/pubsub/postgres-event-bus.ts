import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { PubSub } from 'graphql-subscriptions';
import type { EntityManager } from 'typeorm';
import { EventBus } from './event-bus.js';
import { NotifyTransport } from './notify-transport.js';

export const EVENT_CHANNEL = 'keepsake_events';
/** NOTIFY refuses payloads of 8000 bytes or more; leave room for the envelope. */
const INLINE_LIMIT_BYTES = 7000;

interface Envelope {
  topic: string;
  /** The event itself, or the id of a parked one. */
  body?: string;
  ref?: string;
}

/** JSON that brings Dates back as Dates (GraphQL DateTime fields serialize them). */
export function encodeEvent(payload: unknown): string {
  return JSON.stringify(payload, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { $date: raw.toISOString() } : value;
  });
}

export function decodeEvent<T>(text: string): T {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const keys = Object.keys(value);
      const date = (value as { $date?: unknown }).$date;
      if (keys.length === 1 && typeof date === 'string') return new Date(date);
    }
    return value;
  }) as T;
}

/**
 * Subscription events through PostgreSQL LISTEN/NOTIFY, so every instance behind a load
 * balancer delivers every event to its own subscribers. Each instance listens on one channel
 * and fans out locally by topic. Events published one after another (awaiting each) arrive in
 * that order. Delivery is live-only: a subscriber that was disconnected refetches.
 */
export class PostgresEventBus extends EventBus {
  private readonly logger = new Logger('EventBus');
  private readonly local = new PubSub();
  private stop: (() => Promise<void>) | null = null;
  /** Deliveries run one at a time, so a parked event is not overtaken by the next one. */
  private delivering = Promise.resolve();
  readonly instanceId = randomUUID();

  constructor(private readonly transport: NotifyTransport) {
    super();
  }

  async start(): Promise<void> {
    this.stop = await this.transport.listen(
      EVENT_CHANNEL,
      (text) => {
        this.delivering = this.delivering
          .then(() => this.deliver(text))
          .catch((err: Error) => this.logger.warn({ msg: 'event dropped', error: err.message }));
      },
      () => this.interrupted(),
    );
  }

  async close(): Promise<void> {
    await this.stop?.();
    this.stop = null;
  }

  publish<T>(topic: string, payload: T): Promise<void> {
    return this.send(topic, payload);
  }

  /** NOTIFY (and the parked payload) in the transaction: the server delivers it at commit. */
  override async publishWith<T>(
    manager: EntityManager,
    topic: string,
    payload: T,
  ): Promise<() => Promise<void>> {
    await this.send(topic, payload, manager);
    return () => Promise.resolve();
  }

  private async send<T>(topic: string, payload: T, manager?: EntityManager): Promise<void> {
    const body = encodeEvent(payload);
    let envelope: Envelope = { topic, body };
    if (Buffer.byteLength(body) + topic.length > INLINE_LIMIT_BYTES) {
      envelope = { topic, ref: await this.transport.park(body, manager) };
    }
    await this.transport.notify(EVENT_CHANNEL, JSON.stringify(envelope), manager);
  }

  /** Retention of parked payloads (the scheduled task): every instance has read them by then. */
  pruneParked(olderThanMs: number): Promise<number> {
    return this.transport.pruneParked(olderThanMs);
  }

  subscribe<T>(topic: string): AsyncIterableIterator<T> {
    return this.local.asyncIterableIterator<T>(topic);
  }

  private async deliver(text: string): Promise<void> {
    const envelope = JSON.parse(text) as Envelope;
    const body = envelope.ref ? await this.transport.fetchParked(envelope.ref) : envelope.body;
    if (body == null) return;
    await this.local.publish(envelope.topic, decodeEvent(body));
  }
}
