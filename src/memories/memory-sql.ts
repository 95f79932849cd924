import { similaritySql, sqlLiteral } from '../embeddings/vector-sql.js';
import { Sql, raw } from '../database/sql.js';

/** The embedding kind of memories (embeddings.kind). */
export const MEMORY_KIND = 'memory';

/** A stored memory's vector search inputs, in the active model. */
export interface QueryVector {
  model: string;
  dimensions: number;
  vector: number[];
}

/** A memories row as MemoryEntity: every repository that returns memories selects these. */
export function columns(alias = 'm'): Sql {
  const a = `${alias}.`;
  return raw(`${a}id, ${a}user_id AS "userId", ${a}legacy_id AS "legacyId", ${a}type, ${a}content,
    ${a}normalized, ${a}slot_key AS "slotKey", ${a}slot_value AS "slotValue", ${a}confidence,
    ${a}source, ${a}conversation_id AS "conversationId", ${a}source_message_id AS "sourceMessageId",
    ${a}source_turn_index AS "sourceTurnIndex", ${a}conversation_mode AS "conversationMode",
    ${a}source_reference AS "sourceReference", ${a}reference_count AS "referenceCount",
    ${a}last_referenced_at AS "lastReferencedAt", ${a}status, ${a}valid_from AS "validFrom",
    ${a}valid_to AS "validTo", ${a}superseded_by AS "supersededBy", ${a}archived_at AS "archivedAt",
    ${a}archive_reason AS "archiveReason", ${a}deleted_at AS "deletedAt", ${a}history,
    ${a}created_at AS "createdAt", ${a}updated_at AS "updatedAt"`);
}

/**
 * Joins each memory (alias `m`) to its vector in the query's model, and the cosine distance to
 * the query vector `qv.v` (parsed once in a CTE: parsing a vector is the main cost on WASM).
 * The model is compared as an expression so that the planner looks the vector up by the
 * primary key (kind, item_id, ...) even without statistics: the embedded database never
 * analyzes its tables, and the (model, kind) index then looked cheaper and cost a scan of every
 * vector per memory. The scan stays exact over the user's own memories, never the HNSW index.
 */
export function vectorJoin(q: { model: string; dimensions: number }): {
  on: Sql;
  distance: Sql;
  similarity: Sql;
} {
  const distance = raw(`(e.embedding::vector(${q.dimensions}) <=> qv.v)`);
  return {
    on: raw(
      `e.kind = ${sqlLiteral(MEMORY_KIND)} AND e.item_id = m.id AND (e.model || '') = ${sqlLiteral(q.model)}`,
    ),
    distance,
    similarity: similaritySql(q.model, distance),
  };
}
