/**
 * One advisory lock held around schema changes (migrations, extensions, the indexes made at
 * boot): instances started together on one server would otherwise run the same DDL at once and
 * collide in the catalog. A transaction's lock: it holds behind a pooler in transaction mode,
 * where a session's lock would stay with whichever server connection took it.
 */
const KEY = `hashtextextended('keepsake:schema', 0)`;
export const SCHEMA_XACT_LOCK_SQL = `SELECT pg_advisory_xact_lock(${KEY})`;
