import { Module } from '@nestjs/common';
import { LlmModule } from '../llm/llm.module.js';
import { BackupsModule } from '../backups/backups.module.js';
import { HealthController } from './health.controller.js';

@Module({ imports: [LlmModule, BackupsModule], controllers: [HealthController] })
export class HealthModule {}
