import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { LegacyInvitationEntity } from './legacy-invitation.entity.js';
import { LegacyMemberEntity } from './legacy-member.entity.js';
import { LegacyRole } from './legacy-role.enum.js';
import { LegacyEntity } from './legacy.entity.js';

export interface LegacyWithRole {
  legacy: LegacyEntity;
  role: LegacyRole;
  joinedAt: Date;
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

  findById(id: string): Promise<LegacyEntity | null> {
    return this.m().getRepository(LegacyEntity).findOneBy({ id });
  }

  async update(id: string, changes: Partial<LegacyFields>): Promise<LegacyEntity> {
    await this.m().getRepository(LegacyEntity).update({ id }, changes);
    return this.m().getRepository(LegacyEntity).findOneByOrFail({ id });
  }

  /** Cascades to members, invitations, conversations and everything derived from them. */
  async delete(id: string): Promise<void> {
    await this.m().getRepository(LegacyEntity).delete({ id });
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
      .createQueryBuilder('m')
      .where('m.legacy_id = :legacyId', { legacyId })
      .setLock('pessimistic_write')
      .getMany();
  }

  async addMember(
    manager: EntityManager,
    legacyId: string,
    userId: string,
    role: LegacyRole,
  ): Promise<LegacyMemberEntity> {
    await manager.query(
      `INSERT INTO legacy_members (legacy_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (legacy_id, user_id) DO NOTHING`,
      [legacyId, userId, role],
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
      .createQueryBuilder('m')
      .where('m.legacy_id = ANY(:ids)', { ids: legacyIds })
      .orderBy('m.joined_at', 'ASC')
      .addOrderBy('m.user_id', 'ASC')
      .getMany();
  }

  /** The user's legacies by join time, keyset-paginated on (joined_at, legacy_id). */
  async pageForUser(
    userId: string,
    limit: number,
    after?: { joinedAt: string; legacyId: string },
  ): Promise<LegacyWithRole[]> {
    const qb = this.m()
      .getRepository(LegacyMemberEntity)
      .createQueryBuilder('m')
      .innerJoinAndMapOne('m.legacy', LegacyEntity, 'l', 'l.id = m.legacy_id')
      .where('m.user_id = :userId', { userId });
    if (after) {
      qb.andWhere('(m.joined_at, m.legacy_id) > (:joinedAt::timestamptz, :legacyId::uuid)', after);
    }
    const rows = (await qb
      .orderBy('m.joined_at', 'ASC')
      .addOrderBy('m.legacy_id', 'ASC')
      .limit(limit)
      .getMany()) as (LegacyMemberEntity & { legacy: LegacyEntity })[];
    return rows.map((r) => ({ legacy: r.legacy, role: r.role, joinedAt: r.joinedAt }));
  }

  async upsertInvitation(
    manager: EntityManager,
    legacyId: string,
    email: string,
    role: LegacyRole,
    invitedBy: string,
  ): Promise<LegacyInvitationEntity> {
    await manager.query(
      `INSERT INTO legacy_invitations (legacy_id, email, role, invited_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (legacy_id, email) DO UPDATE SET role = EXCLUDED.role, invited_by = EXCLUDED.invited_by`,
      [legacyId, email, role, invitedBy],
    );
    return manager.getRepository(LegacyInvitationEntity).findOneByOrFail({ legacyId, email });
  }

  pendingInvitations(legacyId: string): Promise<LegacyInvitationEntity[]> {
    return this.m()
      .getRepository(LegacyInvitationEntity)
      .find({ where: { legacyId }, order: { createdAt: 'ASC' } });
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

  /** Turns every pending invitation for this email into a membership; returns how many. */
  async acceptInvitations(manager: EntityManager, email: string, userId: string): Promise<number> {
    const accepted: unknown[] = await manager.query(
      `WITH taken AS (
         DELETE FROM legacy_invitations WHERE email = $1 RETURNING legacy_id, role
       )
       INSERT INTO legacy_members (legacy_id, user_id, role)
       SELECT legacy_id, $2, role FROM taken
       ON CONFLICT (legacy_id, user_id) DO NOTHING
       RETURNING legacy_id`,
      [email, userId],
    );
    return accepted.length;
  }
}
