import { Global, Module } from '@nestjs/common';
import { RateLimitService } from './rate-limit.service.js';

/** Infrastructure: every resolver's guard and the model-calling paths use it. */
@Global()
@Module({ providers: [RateLimitService], exports: [RateLimitService] })
export class RateLimitModule {}
