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
import { AdminClaimRule, adminClaimRule, grantsAdmin } from './admin-claim.js';
import { IdentityErrorCode, IdentityException } from './identity.exception.js';
import { resolveJwtSecret } from './jwt-keys.js';

export interface VerifiedClaims {
  subject: string;
  email: string | null;
  /** Whether the token says anything of an email (`email` or `email_verified`). */
  emailStated: boolean;
  name: string | null;
  admin: boolean;
  /** The token's `exp`: a subscription opened with it ends then. */
  expiresAt: Date;
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
  /** This service's own HS256 tokens (not a provider's): their lifetime is capped. */
  private readonly symmetric: boolean;
  private readonly adminRule: AdminClaimRule | null;

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
    this.symmetric = !env.JWKS_URL && !env.JWT_PUBLIC_KEY;
    this.adminRule = adminClaimRule(env.JWT_ADMIN_CLAIM, this.symmetric);
  }

  /** exp - iat within JWT_MAX_AGE, and iat not in the future (which would stretch it). */
  private checkLifetime(iat: number, exp: number): void {
    const maxAge = this.config.env.JWT_MAX_AGE;
    const now = Math.floor(Date.now() / 1000);
    if (iat > now + this.config.env.JWT_CLOCK_TOLERANCE_S) {
      throw new IdentityException(IdentityErrorCode.INVALID_TOKEN, 'The token is not valid yet.');
    }
    if (exp - iat > maxAge) {
      throw new IdentityException(
        IdentityErrorCode.INVALID_TOKEN,
        `The token's lifetime (exp - iat) is longer than JWT_MAX_AGE (${maxAge} s).`,
      );
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
        // A token that never expires cannot be taken back; HS256 ones must say when they began.
        requiredClaims: this.symmetric ? ['exp', 'iat'] : ['exp'],
      };
      payload =
        typeof this.key === 'function'
          ? (await jwtVerify(token, this.key, options)).payload
          : (await jwtVerify(token, this.key, options)).payload;
    } catch (err) {
      throw new IdentityException(IdentityErrorCode.INVALID_TOKEN, describeJoseError(err));
    }
    if (this.symmetric) this.checkLifetime(payload.iat!, payload.exp!);
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
      // Only an address the identity provider vouches for (`email_verified` exactly true) may
      // claim invitations or be found by addLegacyMember; any other is ignored.
      email: payload.email_verified === true ? (claim('email')?.toLowerCase() ?? null) : null,
      emailStated: 'email' in payload || 'email_verified' in payload,
      name: claim('name'),
      admin: grantsAdmin(this.adminRule, payload),
      expiresAt: new Date(payload.exp! * 1000),
    };
  }
}

function describeJoseError(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'The token has expired.';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.reason === 'missing') return `The token has no "${err.claim}" claim.`;
    return err.claim === 'nbf'
      ? 'The token is not valid yet.'
      : `The token's "${err.claim}" claim is not accepted.`;
  }
  return 'The token is not valid.';
}
