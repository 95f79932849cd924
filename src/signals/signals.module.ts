import { Module } from '@nestjs/common';
import { MemoryUpliftRepository } from './memory-uplift.repository.js';
import { MemoryUpliftResolver } from './memory-uplift.resolver.js';
import { MemoryUpliftService } from './memory-uplift.service.js';

/**
 * Signals for operators: the memory A/B comparison. The rules it shares with the reply path
 * (holdout assignment, complaint and reference detection, the upgrade triggers) are pure
 * functions in this folder that the context, agent and search modules call.
 */
@Module({
  providers: [MemoryUpliftRepository, MemoryUpliftService, MemoryUpliftResolver],
})
export class SignalsModule {}
