import type { SqlDefinitions } from '../database/sql-definitions.js';

/** The words of a tsvector, repeats counted: full-text statistics' document lengths. */
export const SEARCH_SQL: SqlDefinitions = {
  functions: {
    search_word_count: `CREATE OR REPLACE FUNCTION search_word_count(doc tsvector) RETURNS integer
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)::integer
          FROM unnest(doc) AS u
      $$`,
  },
  triggers: {},
};
