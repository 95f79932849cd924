import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { CommonException } from '../common/errors/domain.exception.js';
import { AppConfig } from '../config/app-config.js';
import { VerifiedClaims } from './auth.service.js';
import { cleanName, displayNameProblem } from './display-name.js';
import { IdentityErrorCode, IdentityException } from './identity.exception.js';
import { UserEntity } from './user.entity.js';
import { UserChanges, UserRepository } from './user.repository.js';

/** Runs inside the transaction that creates a user, e.g. to turn invitations into memberships. */
export type UserCreatedHook = (user: UserEntity, manager: EntityManager) => Promise<void>;

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz.length > 0 && tz.length <= 64;
  } catch {
    return false;
  }
}

@Injectable()
export class UsersService {
  private readonly createdHooks: UserCreatedHook[] = [];

  /** See fromClaims: with a provider's sign-in, tokens without an email keep the kept one. */
  private readonly signInKeepsEmail: boolean;

  constructor(
    private readonly dataSource: DataSource,
    private readonly users: UserRepository,
    config: AppConfig,
  ) {
    this.signInKeepsEmail = !!config.env.OIDC_ISSUER;
  }

  onUserCreated(hook: UserCreatedHook): void {
    this.createdHooks.push(hook);
  }

  /**
   * What the console's sign-in read of the person beyond the access token (ID token, userinfo):
   * the email when a source spoke of it (verified, or cleared), and the provider's name while
   * the person has set none of their own.
   */
  async syncSignIn(
    user: UserEntity,
    profile: { email: string | null; emailStated: boolean; name: string | null },
  ): Promise<UserEntity> {
    const email = profile.emailStated ? profile.email : user.email;
    const name = user.displayName ?? cleanName(profile.name);
    if (email === user.email && name === user.displayName) return user;
    await this.users.syncProfile(user.id, { email, displayName: name });
    return { ...user, email, displayName: name };
  }

  /** The user behind verified claims, created on first use. */
  async fromClaims(claims: VerifiedClaims): Promise<UserEntity> {
    const existing = await this.users.findBySubject(claims.subject);
    if (existing) {
      // The email kept is the one the latest token vouches for: a later token that calls it
      // unverified, or leaves it out, takes it away, so invitations to it are claimed only while
      // the provider still verifies it. With the console's provider configured (OIDC_ISSUER),
      // whose access tokens often carry nothing but the subject, a token that says nothing of
      // an email leaves the one the latest sign-in read (ID token or userinfo).
      const email = claims.emailStated || !this.signInKeepsEmail ? claims.email : existing.email;
      if (email !== existing.email || claims.admin !== existing.isPlatformAdmin) {
        await this.users.syncClaims(existing.id, { email, isPlatformAdmin: claims.admin });
        return { ...existing, email, isPlatformAdmin: claims.admin };
      }
      return existing;
    }
    const created = await this.dataSource.transaction(async (manager) => {
      const user = await this.users.insertIfAbsent(manager, {
        subject: claims.subject,
        email: claims.email,
        // A provider's name is taken as one clean line (it is not the person's own typing).
        displayName: cleanName(claims.name),
        isPlatformAdmin: claims.admin,
      });
      if (user) for (const hook of this.createdHooks) await hook(user, manager);
      return user;
    });
    // A concurrent first request may have created it first.
    return created ?? (await this.users.findBySubject(claims.subject))!;
  }

  findByIds(ids: readonly string[]): Promise<UserEntity[]> {
    return this.users.findByIds(ids);
  }

  findByEmail(email: string, manager?: EntityManager): Promise<UserEntity | null> {
    return this.users.findByEmail(email, manager);
  }

  async updateMe(user: UserEntity, changes: UserChanges): Promise<UserEntity> {
    if (changes.timezone !== undefined && !isValidTimezone(changes.timezone)) {
      throw new IdentityException(
        IdentityErrorCode.INVALID_TIMEZONE,
        `"${changes.timezone}" is not an IANA time zone such as Europe/Paris.`,
        'timezone',
      );
    }
    if (changes.displayName !== undefined && changes.displayName !== null) {
      const problem = displayNameProblem(changes.displayName);
      if (problem) throw CommonException.invalid('displayName', problem);
      changes = { ...changes, displayName: changes.displayName.trim() };
    }
    return this.users.update(user.id, changes);
  }
}
