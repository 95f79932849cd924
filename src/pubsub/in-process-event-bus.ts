import { Injectable } from '@nestjs/common';
import { PubSub } from 'graphql-subscriptions';
import { EventBus } from './event-bus.js';

/** Delivers events to subscribers of this process only: one instance, or tests. */
@Injectable()
export class InProcessEventBus extends EventBus {
  private readonly pubsub = new PubSub();

  async publish<T>(topic: string, payload: T): Promise<void> {
    await this.pubsub.publish(topic, payload);
  }

  subscribe<T>(topic: string): AsyncIterableIterator<T> {
    return this.pubsub.asyncIterableIterator<T>(topic);
  }
}
