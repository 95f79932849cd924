import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller.js';
import { OidcService } from './oidc.service.js';
import { SessionController } from './session.controller.js';

/** The family console: its files under /app, the public settings it starts from, its session. */
@Module({ controllers: [SessionController, ConsoleController], providers: [OidcService] })
export class ConsoleModule {}
