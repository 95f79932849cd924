import { Global, Logger, Module, OnModuleInit } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ScheduleModule } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config.js';
import { DatabaseMaintenanceService } from '../database/database-maintenance.service.js';
import { JobRepository } from './job.repository.js';
import { JobsResolver } from './jobs.resolver.js';
import { JobsService } from './jobs.service.js';
import { ScheduledTasksService } from './scheduled-tasks.service.js';

/** Durable jobs and scheduled providers; global infrastructure every feature may use. */
@Global()
@Module({
  imports: [ScheduleModule.forRoot(), AuditModule],
  providers: [JobRepository, JobsService, ScheduledTasksService, JobsResolver],
  exports: [JobsService, ScheduledTasksService],
})
export class JobsModule implements OnModuleInit {
  constructor(
    private readonly tasks: ScheduledTasksService,
    private readonly jobs: JobsService,
    private readonly config: AppConfig,
    private readonly database: DatabaseMaintenanceService,
  ) {}

  onModuleInit(): void {
    this.tasks.register('jobs-cleanup', '17 3 * * *', async () => {
      await this.jobs.deleteFinished();
    });
    // A PostgreSQL server keeps its statistics fresh with autovacuum; the embedded one cannot.
    if (this.config.embedded) {
      this.tasks.register('database-analyze', '7 * * * *', async () => {
        const ms = await this.database.analyze();
        new Logger('Database').log({ msg: 'statistics refreshed', ms: Math.round(ms) });
      });
    }
  }
}
