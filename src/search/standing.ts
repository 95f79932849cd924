import { ROLE_LABEL_NAMES } from './fusion.js';

/**
 * What a member tells the agent to keep doing in every later conversation: standing
 * instructions ("Always include the sources when I ask about history", "Never use jargon",
 * "From now on, answer in French") and stated preferences ("I prefer short answers", "I'd
 * prefer a balanced approach"). Told once, they apply to every later request on their subject,
 * which shares few words with them ("What can you tell me about existentialism?" after "Always
 * give detailed summaries when I ask about philosophical concepts"): search finds them on a
 * path of their own and fusion raises the best of them (fusion.ts, SEARCH_WEIGHT_STANDING).
 *
 * A PostgreSQL advanced regular expression, matched case-insensitively (`~*`): a sentence that
 * starts with "always" or "never" (after an optional "please"), "from now on", "when(ever) I
 * ask", or "I prefer", "I'd prefer", "I would prefer". The partial index that serves the path
 * (migration StandingInstructions) holds this same text: a change here needs a migration that
 * builds the index again, or the path scans every turn of the scope.
 */
export const STANDING_PATTERN =
  "(^|[.!?][[:space:]]+)(please[[:space:]]+)?(always|never)[[:space:]]|\\mfrom now on\\M|\\mwhen(ever)? i ask\\M|\\mi('d| would)?( really)? prefer\\M";

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** A member's turn (segment alias `x`) that states a standing instruction or preference. */
export const STANDING_TURN_SQL = `x.role = 'USER' AND x.content ~* ${literal(STANDING_PATTERN)}`;

/**
 * Said to a person, not to an agent: in an imported dialogue between people (LoCoMo's friends,
 * a family's chat export) the turn before or after it is the other side's, under a person's
 * name, and "Never give up!" is advice to a friend, not an instruction. (Looked up by the
 * neighbouring turns, not the whole conversation: a conversation with the agent has no such
 * turn, and proving that over all of it cost 9 ms a candidate.)
 */
export const SAID_TO_PERSON_SQL = `EXISTS (
  SELECT 1 FROM message_segments h
   WHERE h.conversation_id = x.conversation_id
     AND h.turn_index IN (x.turn_index - 1, x.turn_index + 1)
     AND h.role = 'ASSISTANT' AND h.speaker IS NOT NULL
     AND h.speaker !~* ${literal(`^(${ROLE_LABEL_NAMES})$`)})`;
