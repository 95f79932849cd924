/**
 * What can be embedded. Each feature registers its table once; the sweeper and the
 * re-embedding job use the registration to find rows that lack a vector for a model.
 */
export interface EmbeddingKind {
  /** Stored in embeddings.kind, e.g. `fact`, `memory`, `summary`, `segment`. */
  kind: string;
  table: string;
  /** SQL expression over the table (alias `i`) giving the text to embed. */
  textSql: string;
  /** SQL condition over `i` for rows that should have vectors (e.g. not deleted). */
  whereSql?: string;
  legacyColumn?: string;
  userColumn?: string;
}
