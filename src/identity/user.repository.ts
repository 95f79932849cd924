import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { UserEntity } from './user.entity.js';
import { run, sql } from '../database/sql.js';

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
    return this.repo().findBy({ id: In([...ids]) });
  }

  /** The first user to sign up with this email, whatever its case. */
  async findByEmail(email: string, manager?: EntityManager): Promise<UserEntity | null> {
    const [row] = await run<{ id: string }>(
      manager ?? this.dataSource.manager,
      sql`SELECT id FROM users WHERE lower(email) = lower(${email}) ORDER BY created_at LIMIT 1`,
    );
    return row ? this.repo(manager).findOneBy({ id: row.id }) : null;
  }

  /** Inserts the user unless one with this subject exists; returns null if it did. */
  async insertIfAbsent(
    manager: EntityManager,
    user: Pick<UserEntity, 'subject' | 'email' | 'displayName' | 'isPlatformAdmin'>,
  ): Promise<UserEntity | null> {
    const rows: { id: string }[] = await run(
      manager,
      sql`INSERT INTO users (subject, email, display_name, is_platform_admin)
       VALUES (${user.subject}, ${user.email}, ${user.displayName},
         ${user.isPlatformAdmin}) ON CONFLICT (subject) DO NOTHING RETURNING id`,
    );
    if (rows.length === 0) return null;
    return this.repo(manager).findOneByOrFail({ id: rows[0].id });
  }

  async syncClaims(id: string, claims: { email: string | null; isPlatformAdmin: boolean }) {
    await this.repo().update({ id }, claims);
  }

  async syncProfile(id: string, profile: { email: string | null; displayName: string | null }) {
    await this.repo().update({ id }, profile);
  }

  async update(id: string, changes: UserChanges): Promise<UserEntity> {
    await this.repo().update({ id }, changes);
    return this.repo().findOneByOrFail({ id });
  }
}
