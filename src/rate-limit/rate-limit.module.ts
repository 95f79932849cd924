import { Module } from '@nestjs/common';
import { RateLimitService } from './rate-limit.service.js';

/** Every resolver's guard and the model-calling paths use it; IdentityModule re-exports it. */
@Module({ providers: [RateLimitService], exports: [RateLimitService] })
export class RateLimitModule {}
