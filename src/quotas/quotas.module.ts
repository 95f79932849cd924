import { Module } from '@nestjs/common';
import { QuotaRepository } from './quota.repository.js';
import { QuotasService } from './quotas.service.js';

@Module({
  providers: [QuotaRepository, QuotasService],
  exports: [QuotasService],
})
export class QuotasModule {}
