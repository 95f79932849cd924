import { chmodSync, rmSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { BackupsService } from './backups.service.js';

/** The control socket's file in DATA_DIR. */
export const CONTROL_SOCKET = 'keepsake.sock';

/** A Unix socket's path may be at most this long (sun_path, with its terminating zero). */
const MAX_SOCKET_PATH = 107;

export function controlSocketPath(dataDir: string): string {
  return join(resolve(dataDir), CONTROL_SOCKET);
}

/**
 * The embedded database can be opened by one process only, so `npm run backup` asks the running
 * service through a Unix socket in DATA_DIR (readable by whoever may read DATA_DIR itself, and
 * by no one over the network): `POST /backup` answers the backup as it is written.
 */
@Injectable()
export class ControlSocketService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ControlSocket');
  private server: Server | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly backups: BackupsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.embedded) return;
    const path = controlSocketPath(this.config.env.DATA_DIR);
    if (path.length > MAX_SOCKET_PATH) {
      this.logger.warn({
        msg: 'DATA_DIR is too long a path for the control socket: npm run backup needs the service stopped',
        path,
      });
      return;
    }
    // Whoever made it before is gone: this process holds the data directory's lock.
    rmSync(path, { force: true });
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(path, () => done());
    });
    chmodSync(path, 0o600);
    this.server = server;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    await new Promise((done) => server.close(done));
    rmSync(controlSocketPath(this.config.env.DATA_DIR), { force: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/backup') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'Only POST /backup is served here.' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/gzip' });
    try {
      const manifest = await this.backups.write(res);
      this.logger.log({ msg: 'backup sent', messages: manifest.counts.messages });
    } catch (err) {
      // The client reads a cut stream as a failed backup (its tar does not end).
      this.logger.error({ msg: 'backup failed', error: (err as Error).message });
      res.destroy(err as Error);
    }
  }
}
