import { DataSource } from 'typeorm';
import {
  answeredAloneSql,
  chunkReadableSql,
  chunkWithheldFrom,
  coversAnsweredAloneSql,
  segmentReadableSql,
  segmentWithheldSql,
  withheldFrom,
} from '../../src/conversations/withheld-reply.js';
import { run, sql } from '../../src/database/sql.js';
import { startTestApp, TestApp } from '../support/test-app.js';

const STARTER = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const CONVERSATION = '33333333-3333-4333-8333-333333333333';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A conversation's turns: [who said it or whom it answers, made alone, a notice]. */
const TURNS: [string, boolean, boolean][] = [
  [STARTER, false, false], // the starter alone
  [STARTER, true, false], // the agent's reply, made for them alone
  [STARTER, false, false], // others brought in
  [STARTER, false, false], // a reply made together
  [OTHER, false, false],
  [STARTER, true, true], // a notice marked alone: never summarized
];
const MESSAGES = TURNS.map(([userId, answeredAlone, placeholder], turnIndex) => ({
  id: id(turnIndex + 1),
  conversation_id: CONVERSATION,
  user_id: userId,
  turn_index: turnIndex,
  answered_alone: answeredAlone,
  placeholder,
}));
const SEGMENTS = MESSAGES.map((m, i) => ({
  id: id(100 + i),
  message_id: m.id,
  conversation_id: CONVERSATION,
  user_id: m.user_id,
}));
/** Summaries, the starter's, by the range of turns each covers. */
const CHUNKS = [
  [0, 1],
  [2, 3],
  [4, 5],
  [0, 5],
].map(([start, end], i) => ({
  id: id(200 + i),
  conversation_id: CONVERSATION,
  user_id: STARTER,
  range_start: start,
  range_end: end,
}));

/**
 * withheld-reply.ts's SQL fragments say what its TypeScript says, for the participant a reply
 * answered and for another: evaluated by PostgreSQL over rows of the tables' own types (CTEs
 * named after the tables stand in for them).
 */
describe('a reply made alone, in SQL and TypeScript alike', () => {
  let t: TestApp;
  let ds: DataSource;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    // A file run alone migrates the template first.
  }, 120_000);
  afterAll(() => t.close());

  const WITH = sql`WITH messages AS (SELECT * FROM json_populate_recordset(NULL::messages, ${JSON.stringify(MESSAGES)}::json)),
       message_segments AS (
         SELECT * FROM json_populate_recordset(NULL::message_segments, ${JSON.stringify(SEGMENTS)}::json)),
       conversation_chunks AS (
         SELECT * FROM json_populate_recordset(NULL::conversation_chunks, ${JSON.stringify(CHUNKS)}::json))`;

  it.each([
    ['the participant it answered', STARTER],
    ['another participant', OTHER],
  ])('withholds turns and their segments from %s as withheldFrom does', async (_who, viewer) => {
    const rows = (await run(
      ds,
      sql`${WITH}
       SELECT m.turn_index AS "turnIndex", ${answeredAloneSql('m')} AS alone,
              ${segmentReadableSql('s', viewer)} AS readable,
              ${segmentWithheldSql('s', viewer)} AS withheld
         FROM message_segments s JOIN messages m ON m.id = s.message_id
        ORDER BY m.turn_index`,
    )) as { turnIndex: number; alone: boolean; readable: boolean; withheld: boolean }[];
    expect(rows).toEqual(
      TURNS.map(([userId, answeredAlone], turnIndex) => {
        const withheld = withheldFrom({ answeredAlone, userId }, viewer);
        return { turnIndex, alone: answeredAlone, readable: !withheld, withheld };
      }),
    );
  });

  it.each([
    ['the participant it answered', STARTER],
    ['another participant', OTHER],
  ])('withholds summaries covering one from %s as chunkWithheldFrom does', async (_who, viewer) => {
    const rows = (await run(
      ds,
      sql`${WITH}
       SELECT k.range_start AS start, k.range_end AS "end",
              ${coversAnsweredAloneSql('k')} AS covers, ${chunkReadableSql('k', viewer)} AS readable
         FROM conversation_chunks k ORDER BY k.id`,
    )) as { start: number; end: number; covers: boolean; readable: boolean }[];
    // Notices are never summarized, so only turn 1 makes a summary the starter's alone.
    expect(rows.map((r) => r.covers)).toEqual([true, false, false, true]);
    for (const r of rows) {
      expect(r.readable).toBe(
        !chunkWithheldFrom({ answeredAlone: r.covers, userId: STARTER }, viewer),
      );
    }
  });
});
