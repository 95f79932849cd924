import { Global, Module } from '@nestjs/common';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { AuthService } from './auth.service.js';
import { GqlAuthGuard, PlatformAdminGuard } from './guards/gql-auth.guard.js';
import { HttpAuthGuard } from './guards/http-auth.guard.js';
import { IdentityResolver } from './identity.resolver.js';
import { UserRepository } from './user.repository.js';
import { RequestAuthenticator } from './request-authenticator.js';
import { RevokedTokenRepository } from './revoked-token.repository.js';
import { SessionRevocations } from './session-revocations.js';
import { UsersService } from './users.service.js';

/**
 * Global so that every feature module can guard its resolvers; the guard counts each call against
 * the rate limits, so the rate limiter comes with it.
 */
@Global()
@Module({
  imports: [RateLimitModule],
  providers: [
    AuthService,
    UserRepository,
    UsersService,
    RequestAuthenticator,
    RevokedTokenRepository,
    SessionRevocations,
    GqlAuthGuard,
    HttpAuthGuard,
    PlatformAdminGuard,
    IdentityResolver,
  ],
  exports: [
    AuthService,
    UsersService,
    RequestAuthenticator,
    SessionRevocations,
    GqlAuthGuard,
    HttpAuthGuard,
    PlatformAdminGuard,
    RateLimitModule,
  ],
})
export class IdentityModule {}
