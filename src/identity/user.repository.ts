import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { UserEntity } from './user.entity.js';

export interface UserChanges {
  displayName?: string | null;
  timezone?: string;
  rememberByDefault?: boolean;
  memoryPaused?: boolean;
  longTermMemory?: boolean;
}

@Injectable()
export class UserRepository {
  constructor(private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(UserEntity);
  }

  findBySubject(subject: string): Promise<UserEntity | null> {
    return this.repo().findOneBy({ subject });
  }

  findById(id: string): Promise<UserEntity | null> {
    return this.repo().findOneBy({ id });
  }

  findByIds(ids: readonly string[]): Promise<UserEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.repo().createQueryBuilder('u').where('u.id = ANY(:ids)', { ids }).getMany();
  }

  findByEmail(email: string, manager?: EntityManager): Promise<UserEntity | null> {
    return this.repo(manager)
      .createQueryBuilder('u')
      .where('lower(u.email) = lower(:email)', { email })
      .orderBy('u.created_at', 'ASC')
      .getOne();
  }

  /** Inserts the user unless one with this subject exists; returns null if it did. */
  async insertIfAbsent(
    manager: EntityManager,
    user: Pick<UserEntity, 'subject' | 'email' | 'displayName' | 'isPlatformAdmin'>,
  ): Promise<UserEntity | null> {
    const rows: { id: string }[] = await manager.query(
      `INSERT INTO users (subject, email, display_name, is_platform_admin)
       VALUES ($1, $2, $3, $4) ON CONFLICT (subject) DO NOTHING RETURNING id`,
      [user.subject, user.email, user.displayName, user.isPlatformAdmin],
    );
    if (rows.length === 0) return null;
    return this.repo(manager).findOneByOrFail({ id: rows[0].id });
  }

  async syncClaims(id: string, claims: { email: string | null; isPlatformAdmin: boolean }) {
    await this.repo().update({ id }, claims);
  }

  async update(id: string, changes: UserChanges): Promise<UserEntity> {
    await this.repo().update({ id }, changes);
    return this.repo().findOneByOrFail({ id });
  }
}
