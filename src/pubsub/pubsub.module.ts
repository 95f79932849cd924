import {
  Global,
  Inject,
  Injectable,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { serverLocator } from '../database/server-locator.js';
import { EventBus } from './event-bus.js';
import { InProcessEventBus } from './in-process-event-bus.js';
import { PgNotifyTransport } from './notify-transport.js';
import { PostgresEventBus } from './postgres-event-bus.js';

async function createEventBus(config: AppConfig, dataSource: DataSource): Promise<EventBus> {
  const mode = config.env.EVENT_BUS;
  const url = config.env.DATABASE_URL;
  if (mode === 'memory' || (mode === 'auto' && !url)) return new InProcessEventBus();
  if (!url) throw new Error('EVENT_BUS=postgres needs DATABASE_URL');
  const bus = new PostgresEventBus(
    new PgNotifyTransport(
      dataSource,
      serverLocator(config.env.DATABASE_LISTEN_URL ?? url, config.env.DB_CONNECT_TIMEOUT_MS),
    ),
  );
  await bus.start();
  return bus;
}

@Injectable()
class EventBusLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(EventBus) private readonly bus: EventBus,
    private readonly config: AppConfig,
    @Optional() private readonly tasks?: ScheduledTasksService,
  ) {}

  /** Events too large for NOTIFY are parked in a table (PostgreSQL bus only): pruned here. */
  onModuleInit(): void {
    const bus = this.bus;
    if (!(bus instanceof PostgresEventBus) || !this.tasks) return;
    this.tasks.register('event-payloads-prune', '*/5 * * * *', async () => {
      await bus.pruneParked(this.config.env.EVENT_PAYLOAD_RETENTION);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.bus instanceof PostgresEventBus) await this.bus.close();
  }
}

@Global()
@Module({
  providers: [
    { provide: EventBus, inject: [AppConfig, DataSource], useFactory: createEventBus },
    EventBusLifecycle,
  ],
  exports: [EventBus],
})
export class PubSubModule {}
