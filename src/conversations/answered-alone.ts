/**
 * SQL for the rule of MessageEntity.answeredAlone over a range of turns: a summary (alias `k`,
 * with conversation_id, range_start, range_end) that covers an agent's turn made for one
 * participant alone (always its starter) is theirs to read, as that turn is. Notices are never
 * summarized, so they withhold nothing.
 */
export const ANSWERED_ALONE_SQL = (k: string) =>
  `EXISTS (SELECT 1 FROM messages am WHERE am.conversation_id = ${k}.conversation_id
     AND am.turn_index BETWEEN ${k}.range_start AND ${k}.range_end AND am.answered_alone
     AND NOT am.placeholder)`;
