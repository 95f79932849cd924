import { Injectable, Logger } from '@nestjs/common';
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { AppConfig } from '../config/app-config.js';
import { ConsoleErrorCode, ConsoleException } from './console.exception.js';

/** What the console's sign-in learns of the person, and from where. */
export interface SignInProfile {
  /** A verified email (`email_verified` exactly true), or null. */
  email: string | null;
  /** Whether a source said anything about the email (a claim, verified or not). */
  emailStated: boolean;
  name: string | null;
  /** Where each came from: `id_token`, `userinfo`, or null when none said. */
  from: { email: 'id_token' | 'userinfo' | null; name: 'id_token' | 'userinfo' | null };
}

interface Discovery {
  issuer: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  end_session_endpoint?: string;
}

const DISCOVERY_TTL_MS = 10 * 60_000;

function claim(payload: Record<string, unknown>, name: string): string | null {
  const v = payload[name];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

/** A person's name as providers give it: `name`, else given and family, else their handle. */
export function nameOf(payload: Record<string, unknown>): string | null {
  const given = [claim(payload, 'given_name'), claim(payload, 'family_name')].filter(Boolean);
  return (
    claim(payload, 'name') ??
    (given.length > 0 ? given.join(' ') : null) ??
    claim(payload, 'preferred_username') ??
    claim(payload, 'nickname')
  );
}

/** The email a set of claims vouches for, and whether it said anything about one. */
export function emailOf(payload: Record<string, unknown>): {
  email: string | null;
  stated: boolean;
} {
  const stated = 'email' in payload || 'email_verified' in payload;
  const email = claim(payload, 'email');
  return { email: payload.email_verified === true && email ? email.toLowerCase() : null, stated };
}

/**
 * The console's OpenID Connect provider, seen from the service: its discovery document, the ID
 * tokens it signs (checked here, never taken on the browser's word), its userinfo endpoint and
 * where it ends a session (RP-initiated logout).
 */
@Injectable()
export class OidcService {
  private readonly logger = new Logger('Oidc');
  private discovered: { at: number; value: Promise<Discovery> } | null = null;
  private keys: { uri: string; get: JWTVerifyGetKey } | null = null;

  constructor(private readonly config: AppConfig) {}

  get configured(): boolean {
    return !!this.config.env.OIDC_ISSUER && !!this.config.env.OIDC_CLIENT_ID;
  }

  private discovery(): Promise<Discovery> {
    const now = Date.now();
    if (!this.discovered || now - this.discovered.at > DISCOVERY_TTL_MS) {
      const issuer = this.config.env.OIDC_ISSUER!.replace(/\/$/, '');
      const value = fetch(`${issuer}/.well-known/openid-configuration`, {
        signal: AbortSignal.timeout(5_000),
      }).then(async (res) => {
        if (!res.ok) throw new Error(`discovery answered ${res.status}`);
        return (await res.json()) as Discovery;
      });
      this.discovered = { at: now, value };
      // A failure is not kept: the next sign-in asks again.
      value.catch(() => {
        if (this.discovered?.value === value) this.discovered = null;
      });
    }
    return this.discovered.value;
  }

  /**
   * Who signed in, beyond the access token: the ID token (its signature, issuer, audience, expiry
   * and subject checked; refused when any is wrong), then, for what it leaves out, the userinfo
   * endpoint asked with the access token. The access token's own claims come first; the caller
   * reads them.
   */
  async signInProfile(
    subject: string,
    accessToken: string,
    idToken: string | null,
  ): Promise<SignInProfile> {
    const profile: SignInProfile = {
      email: null,
      emailStated: false,
      name: null,
      from: { email: null, name: null },
    };
    if (!this.configured) return profile;
    const discovery = await this.discovery();
    const take = (payload: Record<string, unknown>, source: 'id_token' | 'userinfo') => {
      const { email, stated } = emailOf(payload);
      if (!profile.emailStated && stated) {
        profile.email = email;
        profile.emailStated = true;
        profile.from.email = source;
      }
      const name = nameOf(payload);
      if (!profile.name && name) {
        profile.name = name;
        profile.from.name = source;
      }
    };
    if (idToken) take(await this.verifyIdToken(discovery, idToken, subject), 'id_token');
    if ((!profile.emailStated || !profile.name) && discovery.userinfo_endpoint) {
      const info = await this.userinfo(discovery.userinfo_endpoint, accessToken, subject);
      if (info) take(info, 'userinfo');
    }
    return profile;
  }

  private async verifyIdToken(
    discovery: Discovery,
    idToken: string,
    subject: string,
  ): Promise<JWTPayload> {
    if (this.keys?.uri !== discovery.jwks_uri) {
      this.keys = { uri: discovery.jwks_uri, get: createRemoteJWKSet(new URL(discovery.jwks_uri)) };
    }
    try {
      const { payload } = await jwtVerify(idToken, this.keys.get, {
        issuer: discovery.issuer,
        audience: this.config.env.OIDC_CLIENT_ID,
        clockTolerance: this.config.env.JWT_CLOCK_TOLERANCE_S,
        requiredClaims: ['sub', 'exp'],
      });
      if (payload.sub !== subject) throw new Error('another subject');
      return payload;
    } catch {
      throw new ConsoleException(
        ConsoleErrorCode.INVALID_ID_TOKEN,
        "The provider's ID token was not accepted (its signature, issuer, audience, expiry or subject).",
        'idToken',
      );
    }
  }

  /** The userinfo endpoint's claims for this access token; null when it will not say. */
  private async userinfo(
    endpoint: string,
    accessToken: string,
    subject: string,
  ): Promise<Record<string, unknown> | null> {
    try {
      const res = await fetch(endpoint, {
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
        signal: AbortSignal.timeout(5_000),
      });
      if (!res.ok) return null;
      const info = (await res.json()) as Record<string, unknown>;
      // Claims about someone else are no claims about this person.
      return info.sub === subject ? info : null;
    } catch (err) {
      this.logger.warn({ msg: 'userinfo failed', error: String(err) });
      return null;
    }
  }

  /**
   * Where the browser goes to end the provider's session too (RP-initiated logout), back to
   * `returnTo` afterwards; null when the provider offers no end-session endpoint.
   */
  async endSessionUrl(returnTo: string, idTokenHint: string | null): Promise<string | null> {
    if (!this.configured) return null;
    const discovery = await this.discovery();
    if (!discovery.end_session_endpoint) return null;
    const url = new URL(discovery.end_session_endpoint);
    url.searchParams.set('client_id', this.config.env.OIDC_CLIENT_ID!);
    url.searchParams.set('post_logout_redirect_uri', returnTo);
    if (idTokenHint) url.searchParams.set('id_token_hint', idTokenHint);
    return url.href;
  }
}
