import { Module, OnModuleInit, Optional } from '@nestjs/common';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { AppConfig } from '../config/app-config.js';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { BackupsService } from './backups.service.js';
import { ControlSocketService } from './control-socket.service.js';

/**
 * Backups: on demand through the control socket (`npm run backup` while the service runs) and,
 * on the embedded database, on BACKUP_SCHEDULE (with an hourly catch-up for a computer that was
 * off when one was due).
 */
@Module({
  providers: [BackupsService, ControlSocketService],
  exports: [BackupsService],
})
export class BackupsModule implements OnModuleInit {
  constructor(
    private readonly backups: BackupsService,
    private readonly tasks: ScheduledTasksService,
    private readonly config: AppConfig,
    @Optional() private readonly metrics?: ServiceMetrics,
  ) {}

  onModuleInit(): void {
    const schedule = this.config.env.BACKUP_SCHEDULE;
    if (!this.config.embedded || !schedule) return;
    this.metrics?.readBackupWith(async () => (await this.backups.lastGood())?.at ?? null);
    const due = async () => {
      await this.backups.backupIfDue();
    };
    this.tasks.register('backup', schedule, due);
    this.tasks.register('backup-catch-up', '41 * * * *', due);
  }
}
