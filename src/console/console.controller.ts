import { Controller, Get, Header, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { extname } from 'node:path';
import { AppConfig } from '../config/app-config.js';
import { findWebRoot } from './web-root.js';

/** What the console needs to know before anyone signs in: nothing here is private. */
export interface ConsoleSettings {
  graphqlPath: string;
  oidc: { issuer: string; clientId: string; scopes: string; providerName: string } | null;
}

/**
 * Serves the family console (built by Vite into dist/web) under /app: its files, and index.html
 * for every client-side route. Everything the console does goes through /graphql.
 */
@Controller('app')
export class ConsoleController {
  private readonly root = findWebRoot();
  private readonly production: boolean;

  constructor(private readonly config: AppConfig) {
    this.production = config.env.NODE_ENV === 'production';
    const issuer = config.env.OIDC_ISSUER;
    // Its own origin only ('self' covers ws: and wss: to it), and the provider's token endpoint.
    const connect = ["'self'", ...(issuer ? [new URL(issuer).origin] : [])];
    this.csp = [
      "default-src 'self'",
      `connect-src ${connect.join(' ')}`,
      "img-src 'self' data:",
      "style-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ].join('; ');
  }

  @Get('config.json')
  @Header('cache-control', 'no-store')
  settings(): ConsoleSettings {
    const env = this.config.env;
    return {
      graphqlPath: '/graphql',
      oidc:
        env.OIDC_ISSUER && env.OIDC_CLIENT_ID
          ? {
              issuer: env.OIDC_ISSUER,
              clientId: env.OIDC_CLIENT_ID,
              scopes: env.OIDC_SCOPES,
              providerName: env.OIDC_PROVIDER_NAME ?? new URL(env.OIDC_ISSUER).hostname,
            }
          : null,
    };
  }

  @Get()
  index(@Res() res: Response): void {
    this.sendIndex(res);
  }

  @Get('*path')
  file(@Param('path') path: string | string[], @Res() res: Response): void {
    const relative = Array.isArray(path) ? path.join('/') : path;
    // A path with an extension is a file (a missing one is a 404); any other is a route.
    if (!this.root || extname(relative) === '') return this.sendIndex(res);
    // In production no source map is served, even one a debugging build left behind.
    if (this.production && extname(relative) === '.map') {
      res.status(404).type('text/plain').send('Not found');
      return;
    }
    this.securityHeaders(res);
    // Vite names assets by their content: they never change under the same name.
    const immutable = relative.startsWith('assets/');
    res.sendFile(
      relative,
      {
        root: this.root,
        dotfiles: 'deny',
        maxAge: immutable ? '365d' : 0,
        immutable,
      },
      (err) => {
        if (err && !res.headersSent) res.status(404).type('text/plain').send('Not found');
      },
    );
  }

  private sendIndex(res: Response): void {
    if (!this.root) {
      res
        .status(503)
        .type('text/plain')
        .send('The console is not built: run `npm run build` (it builds web/ into dist/web).');
      return;
    }
    this.securityHeaders(res);
    res.setHeader('cache-control', 'no-cache');
    res.sendFile('index.html', { root: this.root }, (err) => {
      if (err && !res.headersSent) res.status(500).type('text/plain').send('Console unavailable');
    });
  }

  /** The console runs only its own scripts and talks only to this service and the OIDC provider. */
  private readonly csp: string;

  private securityHeaders(res: Response): void {
    res.setHeader('content-security-policy', this.csp);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    // A page that opens the console (the landing page, another site) gets no handle on it.
    res.setHeader('cross-origin-opener-policy', 'same-origin');
  }
}
