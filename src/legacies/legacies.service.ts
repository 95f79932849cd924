import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import {
  Connection,
  decodeCursor,
  encodeCursor,
  pageRequest,
  toConnection,
} from '../common/pagination/connection.js';
import { CommonException } from '../common/errors/domain.exception.js';
import type { RequestContext } from '../graphql/request-context.js';
import { boundToSession, SubscriptionEnded } from '../graphql/session-bound.js';
import { UserEntity } from '../identity/user.entity.js';
import { EventBus, RevocationEvent, topics } from '../pubsub/event-bus.js';
import { QuotasService } from '../quotas/quotas.service.js';
import { LegacyInvitationEntity } from './legacy-invitation.entity.js';
import { LegacyMemberEntity } from './legacy-member.entity.js';
import { LegacyRole } from './legacy-role.enum.js';
import { LegacyErrorCode, LegacyException } from './legacy.exception.js';
import {
  LegacyFields,
  LegacyRepository,
  LegacyWithRole,
  ReceivedInvitation,
} from './legacy.repository.js';
import { LegacyEntity } from './legacy.entity.js';

const MANAGERS = new Set([LegacyRole.OWNER, LegacyRole.ADMIN]);
const DAY_MS = 24 * 60 * 60 * 1000;
/** myInvitations lists at most this many (the newest): a bounded answer whoever invites. */
export const MY_INVITATIONS_LIMIT = 100;

/**
 * The answer to addLegacyMember: always an invitation, whether or not the email has an account
 * (`member` is kept for older clients and is always null).
 */
export interface AddMemberResult {
  member: null;
  invitation: LegacyInvitationEntity;
}

function checkDates(bornOn?: string | null, diedOn?: string | null): void {
  if (bornOn && diedOn && bornOn > diedOn) {
    throw new LegacyException(
      LegacyErrorCode.INVALID_DATES,
      'The date of death cannot be before the date of birth.',
      'diedOn',
    );
  }
}

/**
 * Legacies, membership and the access checks every other module asks:
 * "may U see legacy L?" (requireMember) and "does U manage L?" (requireManager).
 */
@Injectable()
export class LegaciesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly legacies: LegacyRepository,
    private readonly quotas: QuotasService,
    private readonly config: AppConfig,
    private readonly bus: EventBus,
  ) {}

  /** The viewer's role in the legacy; NOT_FOUND for non-members (existence is not revealed). */
  requireMember(userId: string, legacyId: string): Promise<LegacyRole> {
    return this.requireMemberOr(userId, legacyId, LegacyException.notFound);
  }

  /**
   * The viewer's role in the legacy an item belongs to; a non-member gets `notFound()`, the
   * item's own NOT_FOUND, as for an item that does not exist: whether it (or the legacy) exists
   * is not revealed. Every module's reads and commands of one item ask this.
   */
  async requireMemberOr(
    userId: string,
    legacyId: string,
    notFound: () => Error,
  ): Promise<LegacyRole> {
    const membership = await this.legacies.findMembership(legacyId, userId);
    if (!membership) throw notFound();
    return membership.role;
  }

  /**
   * A member's subscription to one of the legacy's streams: refused with the legacy's NOT_FOUND
   * unless they are a member, and ended once they no longer are (checked before each event, and
   * at once when someone's access to the legacy is revoked). `events` opens the stream once
   * they may.
   */
  async memberSubscription<T>(
    userId: string,
    legacyId: string,
    context: RequestContext,
    events: () => AsyncIterableIterator<T>,
  ): Promise<AsyncIterableIterator<T | SubscriptionEnded>> {
    await this.requireMember(userId, legacyId);
    return boundToSession(this.bus, context, events(), {
      check: () => this.requireMember(userId, legacyId),
      revokedBy: [topics.legacyAccessRevoked(legacyId)],
    });
  }

  /** The legacy, for a background task acting for one of its members; null otherwise. */
  async findForMember(userId: string, legacyId: string): Promise<LegacyEntity | null> {
    if (!(await this.legacies.findMembership(legacyId, userId))) return null;
    return this.legacies.findById(legacyId);
  }

  membershipsPage(after: { userId: string; legacyId: string } | null, limit: number) {
    return this.legacies.membershipsPage(after, limit);
  }

  /** Of these legacies, the ones the user is a member of now. */
  async memberOf(userId: string, legacyIds: readonly string[]): Promise<Set<string>> {
    if (legacyIds.length === 0) return new Set();
    const wanted = new Set(legacyIds);
    return new Set((await this.legacies.legacyIdsOf(userId)).filter((id) => wanted.has(id)));
  }

  /**
   * Of these users, those whose email `viewerId` may see: themselves, and the members of a
   * legacy the viewer owns or administers (who manage membership by email). A plain member sees
   * other members by their display name only.
   */
  async emailsVisibleTo(viewerId: string, userIds: readonly string[]): Promise<Set<string>> {
    const others = userIds.filter((id) => id !== viewerId);
    const managed = await this.legacies.managedAmong(viewerId, others);
    return new Set([...managed, ...(userIds.includes(viewerId) ? [viewerId] : [])]);
  }

  /** Of these users, the members of the legacy. */
  async membersAmong(legacyId: string, userIds: readonly string[]): Promise<Set<string>> {
    return new Set(await this.legacies.membersAmong(legacyId, userIds));
  }

  async requireManager(userId: string, legacyId: string): Promise<LegacyRole> {
    const role = await this.requireMember(userId, legacyId);
    if (!MANAGERS.has(role)) {
      throw new LegacyException(
        LegacyErrorCode.NOT_A_MANAGER,
        'Only owners and admins of this legacy can do this.',
      );
    }
    return role;
  }

  async isManager(userId: string, legacyId: string): Promise<boolean> {
    const membership = await this.legacies.findMembership(legacyId, userId);
    return membership !== null && MANAGERS.has(membership.role);
  }

  async get(user: UserEntity, legacyId: string): Promise<LegacyWithRole> {
    const membership = await this.legacies.findMembership(legacyId, user.id);
    const legacy = membership && (await this.legacies.findById(legacyId));
    if (!membership || !legacy) throw LegacyException.notFound();
    return { legacy, role: membership.role, joinedAt: membership.joinedAt };
  }

  async create(user: UserEntity, fields: Partial<LegacyFields> & { name: string }) {
    const legacy = await this.dataSource.transaction((m) => this.createIn(m, user, fields));
    return { legacy, role: LegacyRole.OWNER };
  }

  /** createLegacy inside the caller's transaction (a legacy archive's import makes one). */
  async createIn(
    m: EntityManager,
    user: UserEntity,
    fields: Partial<LegacyFields> & { name: string },
  ): Promise<LegacyEntity> {
    checkDates(fields.bornOn, fields.diedOn);
    await this.assertMayOwnAnother(m, user.id);
    return this.legacies.create(m, fields, user.id);
  }

  /** MAX_LEGACIES_PER_USER, counted under a per-user lock held until the transaction ends. */
  private async assertMayOwnAnother(m: EntityManager, userId: string): Promise<void> {
    await this.quotas.serialize(m, `legacies.owned:${userId}`);
    const max = this.config.env.MAX_LEGACIES_PER_USER;
    if ((await this.legacies.countOwned(m, userId)) >= max) {
      throw new LegacyException(
        LegacyErrorCode.LEGACY_LIMIT_REACHED,
        `You can own at most ${max} legacies: delete one or hand it to another owner first.`,
      );
    }
  }

  async update(user: UserEntity, legacyId: string, changes: Partial<LegacyFields>) {
    const role = await this.requireManager(user.id, legacyId);
    const current = (await this.legacies.findById(legacyId))!;
    checkDates(
      changes.bornOn !== undefined ? changes.bornOn : current.bornOn,
      changes.diedOn !== undefined ? changes.diedOn : current.diedOn,
    );
    const legacy = await this.legacies.update(legacyId, changes);
    return { legacy, role };
  }

  async delete(user: UserEntity, legacyId: string): Promise<void> {
    const role = await this.requireMember(user.id, legacyId);
    if (role !== LegacyRole.OWNER) {
      throw new LegacyException(LegacyErrorCode.NOT_AN_OWNER, 'Only an owner can delete a legacy.');
    }
    await this.legacies.delete(legacyId);
    await this.accessRevoked(legacyId, null);
  }

  async list(
    user: UserEntity,
    args: { first?: number; after?: string },
  ): Promise<Connection<LegacyWithRole>> {
    const request = pageRequest(args, this.config.env.MAX_PAGE_SIZE);
    const after = request.cursor
      ? (() => {
          const [joinedAt, legacyId] = decodeCursor(request.cursor, 'after', 2) as string[];
          return { joinedAt, legacyId };
        })()
      : undefined;
    const rows = await this.legacies.pageForUser(user.id, request.limit + 1, after);
    return toConnection(rows, request, (r) =>
      encodeCursor([r.joinedAt.toISOString(), r.legacy.id]),
    );
  }

  membersOf(legacyIds: readonly string[]): Promise<LegacyMemberEntity[]> {
    return this.legacies.membersOf(legacyIds);
  }

  async pendingInvitations(user: UserEntity, legacyId: string) {
    await this.requireManager(user.id, legacyId);
    return this.legacies.pendingInvitations(legacyId);
  }

  /**
   * Invites the email to the legacy. Nobody joins until they accept (acceptInvitation), and the
   * answer and the work done are the same whether or not the email has an account.
   */
  async addMember(
    actor: UserEntity,
    legacyId: string,
    email: string,
    role: LegacyRole,
  ): Promise<AddMemberResult> {
    const actorRole = await this.requireManager(actor.id, legacyId);
    if (role === LegacyRole.OWNER && actorRole !== LegacyRole.OWNER) {
      throw new LegacyException(LegacyErrorCode.NOT_AN_OWNER, 'Only an owner can add an owner.');
    }
    const normalized = email.trim().toLowerCase();
    const env = this.config.env;
    return this.dataSource.transaction(async (m) => {
      // Seats are counted under a per-legacy lock, so concurrent invitations cannot overfill it.
      await this.quotas.serialize(m, `legacies.seats:${legacyId}`);
      await this.assertMayChangeInvitation(m, actorRole, legacyId, normalized);
      // The family sees its members' emails anyway: this tells the manager nothing new.
      if (await this.legacies.hasMemberWithEmail(m, legacyId, normalized)) {
        throw new LegacyException(
          LegacyErrorCode.ALREADY_MEMBER,
          'That person is already a member of this legacy.',
          'email',
        );
      }
      await this.legacies.deleteExpiredInvitations(m, legacyId);
      if ((await this.legacies.countSeats(m, legacyId, normalized)) >= env.MAX_MEMBERS_PER_LEGACY) {
        throw new LegacyException(
          LegacyErrorCode.MEMBER_LIMIT_REACHED,
          `A legacy has at most ${env.MAX_MEMBERS_PER_LEGACY} members, counting pending invitations.`,
          'email',
        );
      }
      await this.quotas.consume(m, {
        scope: 'legacy.invitations',
        subjectId: legacyId,
        limit: env.INVITATIONS_PER_LEGACY_PER_DAY,
        windowMs: DAY_MS,
        message: `A legacy can send ${env.INVITATIONS_PER_LEGACY_PER_DAY} invitations a day; try again later.`,
      });
      const invitation = await this.legacies.upsertInvitation(
        m,
        legacyId,
        normalized,
        role,
        actor.id,
        env.INVITATION_TTL,
      );
      return { member: null, invitation };
    });
  }

  /** Invitations to the user's verified email that can still be answered, newest first. */
  myInvitations(user: UserEntity): Promise<ReceivedInvitation[]> {
    return user.email
      ? this.legacies.invitationsFor(user.email, MY_INVITATIONS_LIMIT)
      : Promise.resolve([]);
  }

  /** Joins the legacy with the invitation's role; the invitation is used up. */
  async acceptInvitation(user: UserEntity, invitationId: string): Promise<LegacyWithRole> {
    const email = user.email;
    if (!email) throw LegacyException.invitationNotFound();
    return this.dataSource.transaction(async (m) => {
      const taken = await this.legacies.takeInvitation(m, invitationId, email);
      if (!taken) throw LegacyException.invitationNotFound();
      if (taken.role === LegacyRole.OWNER) await this.assertMayOwnAnother(m, user.id);
      const member = await this.legacies.addMember(m, taken.legacyId, user.id, taken.role);
      const legacy = (await this.legacies.findById(taken.legacyId, m))!;
      return { legacy, role: member.role, joinedAt: member.joinedAt };
    });
  }

  async declineInvitation(user: UserEntity, invitationId: string): Promise<void> {
    const email = user.email;
    if (!email) throw LegacyException.invitationNotFound();
    const taken = await this.dataSource.transaction((m) =>
      this.legacies.takeInvitation(m, invitationId, email),
    );
    if (!taken) throw LegacyException.invitationNotFound();
  }

  async cancelInvitation(actor: UserEntity, legacyId: string, email: string): Promise<void> {
    const actorRole = await this.requireManager(actor.id, legacyId);
    const normalized = email.trim().toLowerCase();
    await this.dataSource.transaction(async (m) => {
      await this.assertMayChangeInvitation(m, actorRole, legacyId, normalized);
      await this.legacies.deleteInvitation(m, legacyId, normalized);
    });
  }

  /** An owner's invitation is an owner's business, as an owner's membership is. */
  private async assertMayChangeInvitation(
    m: EntityManager,
    actorRole: LegacyRole,
    legacyId: string,
    email: string,
  ): Promise<void> {
    const pending = await this.legacies.findInvitationForUpdate(m, legacyId, email);
    if (pending?.role === LegacyRole.OWNER && actorRole !== LegacyRole.OWNER) {
      throw new LegacyException(
        LegacyErrorCode.NOT_AN_OWNER,
        'Only an owner can change or cancel an invitation to become an owner.',
      );
    }
  }

  async setRole(
    actor: UserEntity,
    legacyId: string,
    userId: string,
    role: LegacyRole,
  ): Promise<LegacyMemberEntity> {
    const actorRole = await this.requireManager(actor.id, legacyId);
    return this.dataSource.transaction(async (m) => {
      const members = await this.legacies.lockMembers(m, legacyId);
      const target = members.find((x) => x.userId === userId);
      if (!target) {
        throw new LegacyException(LegacyErrorCode.MEMBER_NOT_FOUND, 'Member not found.', 'userId');
      }
      const touchesOwner = target.role === LegacyRole.OWNER || role === LegacyRole.OWNER;
      if (touchesOwner && actorRole !== LegacyRole.OWNER) {
        throw new LegacyException(
          LegacyErrorCode.NOT_AN_OWNER,
          'Only an owner can make or remove an owner.',
        );
      }
      if (target.role === LegacyRole.OWNER && role !== LegacyRole.OWNER) {
        this.ensureAnotherOwner(members, userId);
      }
      await this.legacies.setRole(m, legacyId, userId, role);
      return { ...target, role };
    });
  }

  async removeMember(actor: UserEntity, legacyId: string, userId: string): Promise<void> {
    const actorRole =
      actor.id === userId
        ? await this.requireMember(actor.id, legacyId)
        : await this.requireManager(actor.id, legacyId);
    await this.dataSource.transaction(async (m) => {
      const members = await this.legacies.lockMembers(m, legacyId);
      const target = members.find((x) => x.userId === userId);
      if (!target) {
        throw new LegacyException(LegacyErrorCode.MEMBER_NOT_FOUND, 'Member not found.', 'userId');
      }
      if (target.role === LegacyRole.OWNER) {
        if (actorRole !== LegacyRole.OWNER) {
          throw new LegacyException(
            LegacyErrorCode.NOT_AN_OWNER,
            'Only an owner can remove an owner.',
          );
        }
        this.ensureAnotherOwner(members, userId);
      }
      await this.legacies.removeMember(m, legacyId, userId);
    });
    await this.accessRevoked(legacyId, userId);
  }

  /** Ends the subscriptions of whoever just lost access (they re-check on this signal). */
  private async accessRevoked(legacyId: string, userId: string | null): Promise<void> {
    const event: RevocationEvent = { userId };
    // Committed already; the subscriptions still end at their next event's access check.
    await this.bus.publishAfterCommit(topics.legacyAccessRevoked(legacyId), event, 'revocation');
  }

  leave(user: UserEntity, legacyId: string): Promise<void> {
    return this.removeMember(user, legacyId, user.id);
  }

  private ensureAnotherOwner(members: LegacyMemberEntity[], leavingUserId: string): void {
    const others = members.filter((x) => x.role === LegacyRole.OWNER && x.userId !== leavingUserId);
    if (others.length === 0) {
      throw new LegacyException(
        LegacyErrorCode.LAST_OWNER,
        'A legacy needs at least one owner: make someone else an owner first.',
      );
    }
  }

  static validateName(name: string): string {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 200) {
      throw CommonException.invalid('name', 'A name has 1 to 200 characters.');
    }
    return trimmed;
  }
}

export type { LegacyEntity };
