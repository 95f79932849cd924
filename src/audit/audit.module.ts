import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { AuditRepository } from './audit.repository.js';
import { AuditResolver } from './audit.resolver.js';
import { AuditService } from './audit.service.js';

/** The audit log of platform administrators' access to other users' data. */
@Module({
  imports: [ConversationsModule],
  providers: [AuditRepository, AuditService, AuditResolver],
  exports: [AuditService],
})
export class AuditModule {}
