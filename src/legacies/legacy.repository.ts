import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In, Raw } from 'typeorm';
import { LegacyInvitationEntity } from './legacy-invitation.entity.js';
import { LegacyMemberEntity } from './legacy-member.entity.js';
import { LegacyRole } from './legacy-role.enum.js';
import { LegacyEntity } from './legacy.entity.js';
import { empty, run, sql } from '../database/sql.js';

export interface LegacyWithRole {
  legacy: LegacyEntity;
  role: LegacyRole;
  joinedAt: Date;
}

/** An invitation as its invitee sees it: enough to decide, nothing more of the legacy. */
export interface ReceivedInvitation {
  id: string;
  legacyId: string;
  legacyName: string;
  role: LegacyRole;
  invitedByName: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export type LegacyFields = Pick<
  LegacyEntity,
  'name' | 'description' | 'bornOn' | 'diedOn' | 'persona'
>;

@Injectable()
export class LegacyRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  async create(
    manager: EntityManager,
    fields: Partial<LegacyFields> & { name: string },
    ownerId: string,
  ): Promise<LegacyEntity> {
    const legacy = await manager
      .getRepository(LegacyEntity)
      .save(manager.getRepository(LegacyEntity).create({ ...fields, createdBy: ownerId }));
    await manager
      .getRepository(LegacyMemberEntity)
      .insert({ legacyId: legacy.id, userId: ownerId, role: LegacyRole.OWNER });
    return legacy;
  }

  findById(id: string, manager?: EntityManager): Promise<LegacyEntity | null> {
    return this.m(manager).getRepository(LegacyEntity).findOneBy({ id });
  }

  /** Legacies the user owns. */
  async countOwned(manager: EntityManager, userId: string): Promise<number> {
    const rows: { n: number }[] = await run(
      manager,
      sql`SELECT count(*)::int AS n FROM legacy_members WHERE user_id = ${userId} AND role = 'OWNER'`,
    );
    return Number(rows[0].n);
  }

  /**
   * Seats taken in the legacy: its members and its invitations that have not expired, except an
   * invitation to `exceptEmail` (renewing it takes no new seat).
   */
  async countSeats(manager: EntityManager, legacyId: string, exceptEmail: string): Promise<number> {
    const rows: { n: number }[] = await run(
      manager,
      sql`SELECT (SELECT count(*) FROM legacy_members WHERE legacy_id = ${legacyId})
            + (SELECT count(*) FROM legacy_invitations
                WHERE legacy_id = ${legacyId} AND expires_at > now() AND email <> ${exceptEmail}) AS n`,
    );
    return Number(rows[0].n);
  }

  /** Whether a member of the legacy has this (lower-cased) email. */
  async hasMemberWithEmail(
    manager: EntityManager,
    legacyId: string,
    email: string,
  ): Promise<boolean> {
    const rows: unknown[] = await run(
      manager,
      sql`SELECT 1 FROM legacy_members m JOIN users u ON u.id = m.user_id
        WHERE m.legacy_id = ${legacyId} AND lower(u.email) = ${email} LIMIT 1`,
    );
    return rows.length > 0;
  }

  async update(id: string, changes: Partial<LegacyFields>): Promise<LegacyEntity> {
    await this.m().getRepository(LegacyEntity).update({ id }, changes);
    return this.m().getRepository(LegacyEntity).findOneByOrFail({ id });
  }

  /** Cascades to members, invitations, conversations and everything derived from them. */
  async delete(id: string): Promise<void> {
    await this.m().getRepository(LegacyEntity).delete({ id });
  }

  /** The legacies the user is a member of now. */
  async legacyIdsOf(userId: string): Promise<string[]> {
    const rows = await this.m().getRepository(LegacyMemberEntity).findBy({ userId });
    return rows.map((r) => r.legacyId);
  }

  /**
   * Every membership, in pages in the primary key's order (legacy, user), with when it began
   * and the member's time zone: for tasks that visit each member on their own calendar.
   */
  async membershipsPage(
    after: { userId: string; legacyId: string } | null,
    limit: number,
  ): Promise<{ userId: string; legacyId: string; joinedAt: Date; timezone: string }[]> {
    const where = after
      ? sql`WHERE (lm.legacy_id, lm.user_id) > (${after.legacyId}::uuid, ${after.userId}::uuid)`
      : empty;
    return run(
      this.m(),
      sql`SELECT lm.user_id AS "userId", lm.legacy_id AS "legacyId", lm.joined_at AS "joinedAt",
              u.timezone
         FROM legacy_members lm JOIN users u ON u.id = lm.user_id
         ${where}
        ORDER BY lm.legacy_id, lm.user_id
        LIMIT ${limit}`,
    );
  }

  /** Of these users, the ones who are members of the legacy. */
  /** Of these users, those who are members of a legacy `managerId` owns or administers. */
  async managedAmong(managerId: string, userIds: readonly string[]): Promise<string[]> {
    if (userIds.length === 0) return [];
    const rows: { userId: string }[] = await run(
      this.m(),
      sql`SELECT DISTINCT m.user_id AS "userId" FROM legacy_members m
         JOIN legacy_members v ON v.legacy_id = m.legacy_id
        WHERE v.user_id = ${managerId} AND v.role IN ('OWNER', 'ADMIN') AND m.user_id = ANY(${userIds}::uuid[])`,
    );
    return rows.map((r) => r.userId);
  }

  async membersAmong(legacyId: string, userIds: readonly string[]): Promise<string[]> {
    if (userIds.length === 0) return [];
    const rows: { userId: string }[] = await run(
      this.m(),
      sql`SELECT user_id AS "userId" FROM legacy_members
        WHERE legacy_id = ${legacyId} AND user_id = ANY(${userIds}::uuid[])`,
    );
    return rows.map((r) => r.userId);
  }

  findMembership(
    legacyId: string,
    userId: string,
    manager?: EntityManager,
  ): Promise<LegacyMemberEntity | null> {
    return this.m(manager).getRepository(LegacyMemberEntity).findOneBy({ legacyId, userId });
  }

  /** Locks the legacy's membership rows so owner-count rules hold under concurrency. */
  async lockMembers(manager: EntityManager, legacyId: string): Promise<LegacyMemberEntity[]> {
    return manager
      .getRepository(LegacyMemberEntity)
      .find({ where: { legacyId }, lock: { mode: 'pessimistic_write' } });
  }

  async addMember(
    manager: EntityManager,
    legacyId: string,
    userId: string,
    role: LegacyRole,
  ): Promise<LegacyMemberEntity> {
    await run(
      manager,
      sql`INSERT INTO legacy_members (legacy_id, user_id, role) VALUES (${legacyId}, ${userId},
        ${role})
       ON CONFLICT (legacy_id, user_id) DO NOTHING`,
    );
    return manager.getRepository(LegacyMemberEntity).findOneByOrFail({ legacyId, userId });
  }

  async setRole(manager: EntityManager, legacyId: string, userId: string, role: LegacyRole) {
    await manager.getRepository(LegacyMemberEntity).update({ legacyId, userId }, { role });
  }

  async removeMember(manager: EntityManager, legacyId: string, userId: string): Promise<void> {
    await manager.getRepository(LegacyMemberEntity).delete({ legacyId, userId });
  }

  /** Members of several legacies at once, for the DataLoader. */
  membersOf(legacyIds: readonly string[]): Promise<LegacyMemberEntity[]> {
    return this.m()
      .getRepository(LegacyMemberEntity)
      .find({
        where: { legacyId: In([...legacyIds]) },
        order: { joinedAt: 'ASC', userId: 'ASC' },
      });
  }

  /** The user's legacies by join time, keyset-paginated on (joined_at, legacy_id). */
  async pageForUser(
    userId: string,
    limit: number,
    after?: { joinedAt: string; legacyId: string },
  ): Promise<LegacyWithRole[]> {
    const cursor = after
      ? sql`AND (m.joined_at, m.legacy_id) > (${after.joinedAt}::timestamptz, ${after.legacyId}::uuid)`
      : empty;
    const rows = await run<{ legacyId: string; role: LegacyRole; joinedAt: Date }>(
      this.m(),
      sql`SELECT m.legacy_id AS "legacyId", m.role, m.joined_at AS "joinedAt"
         FROM legacy_members m JOIN legacies l ON l.id = m.legacy_id
        WHERE m.user_id = ${userId} ${cursor}
        ORDER BY m.joined_at, m.legacy_id
        LIMIT ${limit}`,
    );
    if (rows.length === 0) return [];
    // The legacies themselves through their entity, so they read exactly as everywhere else.
    const legacies = await this.m()
      .getRepository(LegacyEntity)
      .findBy({ id: In(rows.map((r) => r.legacyId)) });
    const byId = new Map(legacies.map((l) => [l.id, l]));
    return rows.map((r) => ({ legacy: byId.get(r.legacyId)!, role: r.role, joinedAt: r.joinedAt }));
  }

  /** Creates or renews the invitation: a fresh role, inviter and expiry. */
  async upsertInvitation(
    manager: EntityManager,
    legacyId: string,
    email: string,
    role: LegacyRole,
    invitedBy: string,
    ttlMs: number,
  ): Promise<LegacyInvitationEntity> {
    await run(
      manager,
      sql`INSERT INTO legacy_invitations (legacy_id, email, role, invited_by, created_at, expires_at)
       VALUES (${legacyId}, ${email}, ${role},
         ${invitedBy}, now(), now() + ${ttlMs} * interval '1 millisecond')
       ON CONFLICT (legacy_id, email) DO UPDATE
         SET role = EXCLUDED.role, invited_by = EXCLUDED.invited_by,
             created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`,
    );
    return manager.getRepository(LegacyInvitationEntity).findOneByOrFail({ legacyId, email });
  }

  /** The legacy's invitations that can still be accepted, oldest first. */
  pendingInvitations(legacyId: string): Promise<LegacyInvitationEntity[]> {
    return this.m()
      .getRepository(LegacyInvitationEntity)
      .find({
        // The database's clock decides, as everywhere else invitations expire.
        where: { legacyId, expiresAt: Raw((column) => `${column} > now()`) },
        order: { createdAt: 'ASC', id: 'ASC' },
      });
  }

  async deleteExpiredInvitations(manager: EntityManager, legacyId: string): Promise<void> {
    await run(
      manager,
      sql`DELETE FROM legacy_invitations WHERE legacy_id = ${legacyId} AND expires_at <= now()`,
    );
  }

  findInvitationForUpdate(
    manager: EntityManager,
    legacyId: string,
    email: string,
  ): Promise<LegacyInvitationEntity | null> {
    return manager
      .getRepository(LegacyInvitationEntity)
      .findOne({ where: { legacyId, email }, lock: { mode: 'pessimistic_write' } });
  }

  async deleteInvitation(manager: EntityManager, legacyId: string, email: string) {
    await manager.getRepository(LegacyInvitationEntity).delete({ legacyId, email });
  }

  /** Invitations to this email that can still be answered, newest first, with what to show. */
  async invitationsFor(email: string, limit: number): Promise<ReceivedInvitation[]> {
    const rows: {
      id: string;
      legacy_id: string;
      legacy_name: string;
      role: LegacyRole;
      invited_by_name: string | null;
      created_at: Date;
      expires_at: Date;
    }[] = await run(
      this.m(),
      sql`SELECT i.id, i.legacy_id, l.name AS legacy_name, i.role, u.display_name AS invited_by_name,
              i.created_at, i.expires_at
         FROM legacy_invitations i
         JOIN legacies l ON l.id = i.legacy_id
         LEFT JOIN users u ON u.id = i.invited_by
        WHERE i.email = ${email} AND i.expires_at > now()
        ORDER BY i.created_at DESC, i.id DESC
        LIMIT ${limit}`,
    );
    return rows.map((r) => ({
      id: r.id,
      legacyId: r.legacy_id,
      legacyName: r.legacy_name,
      role: r.role,
      invitedByName: r.invited_by_name,
      createdAt: new Date(r.created_at),
      expiresAt: new Date(r.expires_at),
    }));
  }

  /**
   * Removes the invitation if it is addressed to this email and has not expired, returning it:
   * answering an invitation takes it exactly once.
   */
  async takeInvitation(
    manager: EntityManager,
    id: string,
    email: string,
  ): Promise<{ legacyId: string; role: LegacyRole } | null> {
    const taken = await run<{ legacy_id: string; role: LegacyRole }>(
      manager,
      sql`DELETE FROM legacy_invitations WHERE id = ${id} AND email = ${email} AND expires_at > now()
       RETURNING legacy_id, role`,
    );
    return taken.length > 0 ? { legacyId: taken[0].legacy_id, role: taken[0].role } : null;
  }
}
