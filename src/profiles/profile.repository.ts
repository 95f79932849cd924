import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { QueryVector } from '../embeddings/embedding.service.js';
import { denseTerms, vectorText } from '../embeddings/vector-sql.js';
import { returned, SqlParams } from '../database/sql-params.js';
import { isMemberSql } from '../legacies/membership-sql.js';
import type { ProfileField, ProfileValue } from './profile-fields.js';
import { ProfileEntity } from './profile.entity.js';
import { ProfileEntryEntity } from './profile-entry.entity.js';

export const PROFILE_KIND = 'profile';

/** Rows of the profile kind that should have vectors: only a consenting member's are embedded. */
export const PROFILE_EMBED_WHERE = `EXISTS (SELECT 1 FROM profiles p
  WHERE p.user_id = i.user_id AND p.consent)`;

/** An entry with its legacy's name (relationships) for showing it back to its member. */
export interface ProfileEntryRow extends ProfileEntryEntity {
  legacyName: string | null;
}

/** An entry that may be used now, with its cosine similarity to the question (when known). */
export interface UsableEntry extends ProfileEntryEntity {
  similarity: number | null;
}

const ENTRY_COLUMNS = `e.id, e.user_id AS "userId", e.field, e.legacy_id AS "legacyId", e.value,
  e.text, e.created_at AS "createdAt", e.updated_at AS "updatedAt"`;

function reviveEntry<T extends ProfileEntryEntity>(row: T): T {
  return { ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) };
}

function reviveProfile(row: ProfileEntity): ProfileEntity {
  return {
    ...row,
    consentChangedAt: row.consentChangedAt ? new Date(row.consentChangedAt) : null,
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  };
}

const PROFILE_COLUMNS = `user_id AS "userId", consent, consent_changed_at AS "consentChangedAt",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** All SQL of profiles and their entries. Every statement is scoped to one user. */
@Injectable()
export class ProfileRepository {
  constructor(private readonly dataSource: DataSource) {}

  private m(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  async find(userId: string, manager?: EntityManager): Promise<ProfileEntity | null> {
    const rows: ProfileEntity[] = await this.m(manager).query(
      `SELECT ${PROFILE_COLUMNS} FROM profiles WHERE user_id = $1`,
      [userId],
    );
    return rows[0] ? reviveProfile(rows[0]) : null;
  }

  /**
   * The user's profile row, created (without consent) if missing, and locked until the
   * transaction ends: updates and a change of consent never interleave.
   */
  async lock(manager: EntityManager, userId: string): Promise<ProfileEntity> {
    await manager.query(
      `INSERT INTO profiles (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING`,
      [userId],
    );
    const rows: ProfileEntity[] = await manager.query(
      `SELECT ${PROFILE_COLUMNS} FROM profiles WHERE user_id = $1 FOR UPDATE`,
      [userId],
    );
    return reviveProfile(rows[0]);
  }

  async setConsent(manager: EntityManager, userId: string, consent: boolean): Promise<void> {
    await manager.query(
      `UPDATE profiles SET consent = $2, consent_changed_at = now(), updated_at = now()
        WHERE user_id = $1 AND consent IS DISTINCT FROM $2`,
      [userId, consent],
    );
  }

  async touch(manager: EntityManager, userId: string): Promise<void> {
    await manager.query(`UPDATE profiles SET updated_at = now() WHERE user_id = $1`, [userId]);
  }

  /**
   * The user's entries: every field, and relationships to legacies they are still a member of
   * (leaving deletes the relationship, by trigger; the condition keeps reads right regardless).
   */
  async entries(userId: string, manager?: EntityManager): Promise<ProfileEntryRow[]> {
    const rows: ProfileEntryRow[] = await this.m(manager).query(
      `SELECT ${ENTRY_COLUMNS}, l.name AS "legacyName"
         FROM profile_entries e LEFT JOIN legacies l ON l.id = e.legacy_id
        WHERE e.user_id = $1
          AND (e.legacy_id IS NULL OR ${isMemberSql('e.legacy_id', 'e.user_id')})
        ORDER BY e.field, l.name, e.legacy_id`,
      [userId],
    );
    return rows.map(reviveEntry);
  }

  /**
   * Writes an entry; returns its id when its text is new or changed (its vector is then out of
   * date), null when it was already so, or when it is a relationship to a legacy the user has
   * just left (checked again here, as leaving deletes relationships by trigger).
   */
  async upsertEntry(
    manager: EntityManager,
    entry: {
      userId: string;
      field: ProfileField;
      legacyId: string | null;
      value: ProfileValue;
      text: string;
    },
  ): Promise<string | null> {
    const rows: { id: string }[] = await manager.query(
      `INSERT INTO profile_entries AS e (user_id, field, legacy_id, value, text)
       SELECT $1, $2, $3::uuid, $4::jsonb, $5
        WHERE $3::uuid IS NULL OR ${isMemberSql('$3::uuid', '$1::uuid')}
       ON CONFLICT ON CONSTRAINT profile_entries_unique DO UPDATE
         SET value = EXCLUDED.value, text = EXCLUDED.text, updated_at = now()
         WHERE e.value IS DISTINCT FROM EXCLUDED.value OR e.text IS DISTINCT FROM EXCLUDED.text
       RETURNING e.id`,
      [entry.userId, entry.field, entry.legacyId, JSON.stringify(entry.value), entry.text],
    );
    return rows[0]?.id ?? null;
  }

  /** Deletes one entry (its vectors go with it, by trigger); returns whether there was one. */
  async deleteEntry(
    manager: EntityManager,
    userId: string,
    field: ProfileField,
    legacyId: string | null,
  ): Promise<boolean> {
    const rows = returned<{ id: string }>(
      await manager.query(
        `DELETE FROM profile_entries
          WHERE user_id = $1 AND field = $2 AND legacy_id IS NOT DISTINCT FROM $3::uuid
          RETURNING id`,
        [userId, field, legacyId],
      ),
    );
    return rows.length > 0;
  }

  /**
   * Every entry of the user and every vector of the profile kind that names them, in the
   * caller's transaction: plain deletes, nothing kept for undo.
   */
  async deleteEverything(manager: EntityManager, userId: string): Promise<void> {
    await manager.query(`DELETE FROM profile_entries WHERE user_id = $1`, [userId]);
    // The trigger took the entries' vectors; this also takes any written under a stale id.
    await manager.query(`DELETE FROM embeddings WHERE kind = $1 AND user_id = $2`, [
      PROFILE_KIND,
      userId,
    ]);
  }

  /**
   * The entries that may be read into a context or recall about `legacyId` now: none without
   * consent; the fields that belong to no legacy, and the relationship to this legacy only,
   * while the user is a member of it. With a query vector, each entry's cosine similarity.
   */
  async usable(
    userId: string,
    legacyId: string,
    query: QueryVector | null,
  ): Promise<UsableEntry[]> {
    const p = new SqlParams(userId, legacyId);
    let join = '';
    let similarity = 'NULL::float8';
    if (query) {
      const dense = denseTerms(query, PROFILE_KIND, p.add(vectorText(query.vector)), 'v');
      join = `LEFT JOIN embeddings v ON v.item_id = e.id AND ${dense.filter}`;
      similarity = dense.similarity;
    }
    const rows: UsableEntry[] = await this.m().query(
      `SELECT ${ENTRY_COLUMNS}, ${similarity} AS similarity
         FROM profile_entries e
         JOIN profiles p ON p.user_id = e.user_id AND p.consent
         ${join}
        WHERE e.user_id = $1
          AND (e.legacy_id IS NULL OR e.legacy_id = $2::uuid)
          AND ${isMemberSql('$2::uuid', 'e.user_id')}`,
      p.values,
    );
    return rows.map((r) => ({
      ...reviveEntry(r),
      similarity: r.similarity === null ? null : Number(r.similarity),
    }));
  }
}
