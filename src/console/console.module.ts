import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller.js';

/** The family console: its files under /app and the public settings it starts from. */
@Module({ controllers: [ConsoleController] })
export class ConsoleModule {}
