import { createPublicKey, KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  createRemoteJWKSet,
  errors as joseErrors,
  JWTPayload,
  jwtVerify,
  JWTVerifyGetKey,
} from 'jose';
import { AppConfig } from '../config/app-config.js';
import { IdentityErrorCode, IdentityException } from './identity.exception.js';
import { resolveJwtSecret } from './jwt-keys.js';

export interface VerifiedClaims {
  subject: string;
  email: string | null;
  name: string | null;
  admin: boolean;
}

const ASYMMETRIC = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'EdDSA',
];

/** Verifies bearer tokens: HS256 with a shared secret, or a provider's public key or JWKS. */
@Injectable()
export class AuthService {
  private readonly key: Uint8Array | KeyObject | JWTVerifyGetKey;
  private readonly algorithms: string[];

  constructor(private readonly config: AppConfig) {
    const env = config.env;
    if (env.JWKS_URL) {
      this.key = createRemoteJWKSet(new URL(env.JWKS_URL));
      this.algorithms = ASYMMETRIC;
    } else if (env.JWT_PUBLIC_KEY) {
      this.key = createPublicKey(env.JWT_PUBLIC_KEY);
      this.algorithms = ASYMMETRIC;
    } else {
      this.key = new TextEncoder().encode(resolveJwtSecret(config) ?? '');
      this.algorithms = ['HS256'];
    }
  }

  async verify(token: string): Promise<VerifiedClaims> {
    let payload: JWTPayload;
    try {
      const options = {
        algorithms: this.algorithms,
        issuer: this.config.env.JWT_ISSUER,
        audience: this.config.env.JWT_AUDIENCE,
        clockTolerance: this.config.env.JWT_CLOCK_TOLERANCE_S,
      };
      payload =
        typeof this.key === 'function'
          ? (await jwtVerify(token, this.key, options)).payload
          : (await jwtVerify(token, this.key, options)).payload;
    } catch (err) {
      throw new IdentityException(IdentityErrorCode.INVALID_TOKEN, describeJoseError(err));
    }
    if (typeof payload.sub !== 'string' || payload.sub.trim() === '') {
      throw new IdentityException(IdentityErrorCode.INVALID_TOKEN, 'The token has no subject.');
    }
    const claim = (name: string): string | null => {
      const v = payload[name];
      return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
    };
    const issuerPrefix = this.config.env.JWT_ISSUER ? '' : payload.iss ? `${payload.iss}|` : '';
    return {
      subject: `${issuerPrefix}${payload.sub}`,
      // An address the identity provider says is unproven must not claim invitations or be
      // found by addLegacyMember: it is ignored.
      email: payload.email_verified === false ? null : (claim('email')?.toLowerCase() ?? null),
      name: claim('name'),
      admin: payload.admin === true,
    };
  }
}

function describeJoseError(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'The token has expired.';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    return err.claim === 'nbf'
      ? 'The token is not valid yet.'
      : `The token's "${err.claim}" claim is not accepted.`;
  }
  return 'The token is not valid.';
}
