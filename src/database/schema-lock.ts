/**
 * One advisory lock held around schema changes (migrations, extensions, the indexes made at
 * boot): instances started together on one server would otherwise run the same DDL at once and
 * collide in the catalog.
 */
const KEY = `hashtextextended('keepsake:schema', 0)`;
export const SCHEMA_LOCK_SQL = `SELECT pg_advisory_lock(${KEY})`;
export const SCHEMA_UNLOCK_SQL = `SELECT pg_advisory_unlock(${KEY})`;
export const SCHEMA_XACT_LOCK_SQL = `SELECT pg_advisory_xact_lock(${KEY})`;
