import type { SqlDefinitions } from '../database/sql-definitions.js';

/**
 * An item's vectors go with it: embeddings name their item by kind and id (no foreign key, one
 * table for every kind), so each embedded table deletes its rows' vectors by trigger.
 */
export const EMBEDDING_SQL: SqlDefinitions = {
  functions: {
    embeddings_forget_item: `CREATE OR REPLACE FUNCTION embeddings_forget_item()
      RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM embeddings WHERE kind = TG_ARGV[0] AND item_id = OLD.id;
        RETURN OLD;
      END $$`,
  },
  triggers: {
    conversation_chunks_forget_vectors: `CREATE TRIGGER conversation_chunks_forget_vectors
      AFTER DELETE ON conversation_chunks
      FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('summary')`,
    facts_forget_vectors: `CREATE TRIGGER facts_forget_vectors AFTER DELETE ON facts
      FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('fact')`,
    memories_forget_embeddings: `CREATE TRIGGER memories_forget_embeddings AFTER DELETE ON memories
      FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('memory')`,
    message_segments_forget_vectors: `CREATE TRIGGER message_segments_forget_vectors
      AFTER DELETE ON message_segments
      FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('segment')`,
    period_summaries_forget_embeddings: `CREATE TRIGGER period_summaries_forget_embeddings
      AFTER DELETE ON period_summaries
      FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('period')`,
    story_chunks_forget_embeddings: `CREATE TRIGGER story_chunks_forget_embeddings
      AFTER DELETE ON story_chunks
      FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('story')`,
    profile_entries_forget_embeddings: `CREATE TRIGGER profile_entries_forget_embeddings
      AFTER DELETE ON profile_entries
      FOR EACH ROW EXECUTE FUNCTION embeddings_forget_item('profile')`,
  },
};
