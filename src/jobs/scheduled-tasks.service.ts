import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { AppConfig } from '../config/app-config.js';
import { JobsService } from './jobs.service.js';
import { asBackground } from '../database/database-queue.js';

interface Task {
  name: string;
  cron: string;
  run: () => Promise<void>;
}

/**
 * Scheduled providers on @nestjs/schedule. On each tick the instance holding the task's lease
 * (a row in scheduler_leases) enqueues one job keyed by the tick, so with several instances the
 * task still runs once per tick, and it gets the queue's retries and failure review.
 */
@Injectable()
export class ScheduledTasksService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Scheduler');
  private readonly tasks = new Map<string, Task>();

  constructor(
    private readonly jobs: JobsService,
    private readonly registry: SchedulerRegistry,
    private readonly config: AppConfig,
  ) {}

  /** Call from a module's onModuleInit. */
  register(name: string, cron: string, run: () => Promise<void>): void {
    this.tasks.set(name, { name, cron, run });
    this.jobs.register(`scheduled:${name}`, () => run());
  }

  onApplicationBootstrap(): void {
    if (!this.config.env.JOBS_SCHEDULER) return;
    for (const task of this.tasks.values()) {
      const job = CronJob.from({
        cronTime: task.cron,
        onTick: () => void asBackground(() => this.tick(task)),
        start: true,
        timeZone: 'UTC',
      });
      this.registry.addCronJob(task.name, job);
    }
  }

  onApplicationShutdown(): void {
    for (const name of this.tasks.keys()) {
      if (this.registry.doesExist('cron', name)) this.registry.deleteCronJob(name);
    }
  }

  /** One tick: the lease holder enqueues the task's job for this tick, once. */
  async tick(task: { name: string }, at = new Date()): Promise<boolean> {
    try {
      if (!(await this.jobs.takeLease(`scheduler:${task.name}`, 120_000))) return false;
      const slot = new Date(Math.floor(at.getTime() / 1000) * 1000).toISOString();
      return await this.jobs.enqueue(`scheduled:${task.name}`, slot, {}, { dedupe: 'once' });
    } catch (err) {
      this.logger.error({
        msg: 'scheduling failed',
        task: task.name,
        error: (err as Error).message,
      });
      return false;
    }
  }

  names(): string[] {
    return [...this.tasks.keys()];
  }
}
