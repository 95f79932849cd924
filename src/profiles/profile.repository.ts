import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { QueryVector } from '../embeddings/embedding.service.js';
import { denseTerms } from '../embeddings/vector-sql.js';
import { isMemberSql } from '../legacies/membership-sql.js';
import type { ProfileField, ProfileValue } from './profile-fields.js';
import { ProfileEntity } from './profile.entity.js';
import { ProfileEntryEntity } from './profile-entry.entity.js';
import { empty, raw, run, sql } from '../database/sql.js';

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

const ENTRY_COLUMNS = sql`e.id, e.user_id AS "userId", e.field, e.legacy_id AS "legacyId", e.value,
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

const PROFILE_COLUMNS = sql`user_id AS "userId", consent, consent_changed_at AS "consentChangedAt",
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
    const rows: ProfileEntity[] = await run(
      this.m(manager),
      sql`SELECT ${PROFILE_COLUMNS} FROM profiles WHERE user_id = ${userId}`,
    );
    return rows[0] ? reviveProfile(rows[0]) : null;
  }

  /**
   * The user's profile row, created (without consent) if missing, and locked until the
   * transaction ends: updates and a change of consent never interleave.
   */
  async lock(manager: EntityManager, userId: string): Promise<ProfileEntity> {
    await run(
      manager,
      sql`INSERT INTO profiles (user_id) VALUES (${userId}) ON CONFLICT (user_id) DO NOTHING`,
    );
    const rows: ProfileEntity[] = await run(
      manager,
      sql`SELECT ${PROFILE_COLUMNS} FROM profiles WHERE user_id = ${userId} FOR UPDATE`,
    );
    return reviveProfile(rows[0]);
  }

  async setConsent(manager: EntityManager, userId: string, consent: boolean): Promise<void> {
    await run(
      manager,
      sql`UPDATE profiles SET consent = ${consent}, consent_changed_at = now(), updated_at = now()
        WHERE user_id = ${userId} AND consent IS DISTINCT FROM ${consent}`,
    );
  }

  async touch(manager: EntityManager, userId: string): Promise<void> {
    await run(manager, sql`UPDATE profiles SET updated_at = now() WHERE user_id = ${userId}`);
  }

  /**
   * The user's entries: every field, and relationships to legacies they are still a member of
   * (leaving deletes the relationship, by trigger; the condition keeps reads right regardless).
   */
  async entries(userId: string, manager?: EntityManager): Promise<ProfileEntryRow[]> {
    const rows: ProfileEntryRow[] = await run(
      this.m(manager),
      sql`SELECT ${ENTRY_COLUMNS}, l.name AS "legacyName"
         FROM profile_entries e LEFT JOIN legacies l ON l.id = e.legacy_id
        WHERE e.user_id = ${userId}
          AND (e.legacy_id IS NULL OR ${isMemberSql(raw('e.legacy_id'), raw('e.user_id'))})
        ORDER BY e.field, l.name, e.legacy_id`,
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
    const rows: { id: string }[] = await run(
      manager,
      sql`INSERT INTO profile_entries AS e (user_id, field, legacy_id, value, text)
       SELECT ${entry.userId}::uuid, ${entry.field}, ${entry.legacyId}::uuid, ${JSON.stringify(entry.value)}::jsonb, ${entry.text}
        WHERE ${entry.legacyId}::uuid IS NULL OR ${isMemberSql(sql`${entry.legacyId}::uuid`, sql`${entry.userId}::uuid`)}
       ON CONFLICT ON CONSTRAINT profile_entries_unique DO UPDATE
         SET value = EXCLUDED.value, text = EXCLUDED.text, updated_at = now()
         WHERE e.value IS DISTINCT FROM EXCLUDED.value OR e.text IS DISTINCT FROM EXCLUDED.text
       RETURNING e.id`,
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
    const rows = await run<{ id: string }>(
      manager,
      sql`DELETE FROM profile_entries
          WHERE user_id = ${userId} AND field = ${field} AND legacy_id IS NOT DISTINCT FROM ${legacyId}::uuid
          RETURNING id`,
    );
    return rows.length > 0;
  }

  /**
   * Every entry of the user and every vector of the profile kind that names them, in the
   * caller's transaction: plain deletes, nothing kept for undo.
   */
  async deleteEverything(manager: EntityManager, userId: string): Promise<void> {
    await run(manager, sql`DELETE FROM profile_entries WHERE user_id = ${userId}`);
    // The trigger took the entries' vectors; this also takes any written under a stale id.
    await run(
      manager,
      sql`DELETE FROM embeddings WHERE kind = ${PROFILE_KIND} AND user_id = ${userId}`,
    );
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
    let joined = empty;
    let similarity = sql`NULL::float8`;
    if (query) {
      const dense = denseTerms(query, PROFILE_KIND, 'v');
      joined = sql`LEFT JOIN embeddings v ON v.item_id = e.id AND ${dense.filter}`;
      similarity = dense.similarity;
    }
    const rows = await run<UsableEntry>(
      this.m(),
      sql`SELECT ${ENTRY_COLUMNS}, ${similarity} AS similarity
         FROM profile_entries e
         JOIN profiles p ON p.user_id = e.user_id AND p.consent
         ${joined}
        WHERE e.user_id = ${userId}
          AND (e.legacy_id IS NULL OR e.legacy_id = ${legacyId}::uuid)
          AND ${isMemberSql(sql`${legacyId}::uuid`, raw('e.user_id'))}`,
    );
    return rows.map((r) => ({
      ...reviveEntry(r),
      similarity: r.similarity === null ? null : Number(r.similarity),
    }));
  }
}
