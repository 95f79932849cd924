import type { CorsOptions } from '@nestjs/common/interfaces/external/cors-options.interface.js';

/**
 * CORS for the origins in CORS_ORIGINS only; the same origin needs none. Credentials are allowed
 * so a frontend may send cookies to a proxy in front of the service; the API itself reads only
 * the Authorization header.
 */
export function corsOptions(allowed: readonly string[]): CorsOptions {
  return {
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.includes(origin)),
    credentials: true,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: [
      'authorization',
      'content-type',
      'x-request-id',
      'apollo-require-preflight',
      'x-apollo-operation-name',
    ],
    exposedHeaders: ['x-request-id', 'retry-after'],
    maxAge: 600,
  };
}
