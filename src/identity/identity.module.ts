import { Global, Module } from '@nestjs/common';
import { AuthService } from './auth.service.js';
import { GqlAuthGuard, PlatformAdminGuard } from './guards/gql-auth.guard.js';
import { IdentityResolver } from './identity.resolver.js';
import { UserRepository } from './user.repository.js';
import { UsersService } from './users.service.js';

/** Global so that every feature module can guard its resolvers. */
@Global()
@Module({
  providers: [
    AuthService,
    UserRepository,
    UsersService,
    GqlAuthGuard,
    PlatformAdminGuard,
    IdentityResolver,
  ],
  exports: [AuthService, UsersService, GqlAuthGuard, PlatformAdminGuard],
})
export class IdentityModule {}
