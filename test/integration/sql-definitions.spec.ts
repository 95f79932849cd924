import { DataSource } from 'typeorm';
import { CONVERSATION_SQL } from '../../src/conversations/conversation-triggers.sql.js';
import { SqlDefinitions } from '../../src/database/sql-definitions.js';
import { EMBEDDING_SQL } from '../../src/embeddings/embedding-triggers.sql.js';
import { FACT_SQL } from '../../src/facts/fact-triggers.sql.js';
import { PROFILE_SQL } from '../../src/profiles/profile-triggers.sql.js';
import { SEARCH_SQL } from '../../src/search/search-functions.sql.js';
import { startTestApp, TestApp } from '../support/test-app.js';

const OWNERS: SqlDefinitions[] = [
  CONVERSATION_SQL,
  EMBEDDING_SQL,
  FACT_SQL,
  PROFILE_SQL,
  SEARCH_SQL,
];
const FUNCTIONS = Object.assign({}, ...OWNERS.map((o) => o.functions)) as Record<string, string>;
const TRIGGERS = Object.assign({}, ...OWNERS.map((o) => o.triggers)) as Record<string, string>;

/**
 * Every trigger function, SQL function and trigger the migrations leave has its current
 * definition in one file of its owner's module (`*.sql.ts`), and that file says what the
 * migrated database runs: each definition, created again over the migrated one in a
 * transaction that is rolled back, leaves the database's own definition as it was.
 */
describe('trigger and SQL function definitions', () => {
  let t: TestApp;
  let ds: DataSource;

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    ds = t.app.get(DataSource);
    // A file run alone migrates the template first.
  }, 120_000);
  afterAll(() => t.close());

  // Functions of the public schema that no extension brought (vector, pg_trgm bring many).
  const functionDefs = async (run: (sql: string) => Promise<unknown>) =>
    (await run(`
      SELECT p.proname AS name, pg_get_functiondef(p.oid) AS def
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'public'
         AND NOT EXISTS (SELECT 1 FROM pg_depend d
                          WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                            AND d.deptype = 'e')
       ORDER BY 1`)) as { name: string; def: string }[];

  const triggerDefs = async (run: (sql: string) => Promise<unknown>) =>
    (await run(`
      SELECT t.tgname AS name, t.tgrelid::regclass::text AS "table",
             pg_get_triggerdef(t.oid) AS def
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND NOT t.tgisinternal
       ORDER BY 1`)) as { name: string; table: string; def: string }[];

  it('names every function and trigger of the migrated database, and no other', async () => {
    const run = (sql: string) => ds.query(sql);
    expect((await functionDefs(run)).map((f) => f.name)).toEqual(Object.keys(FUNCTIONS).sort());
    expect((await triggerDefs(run)).map((f) => f.name)).toEqual(Object.keys(TRIGGERS).sort());
  });

  it('defines each as the migrated database has it', async () => {
    const runner = ds.createQueryRunner();
    await runner.connect();
    const run = (sql: string) => runner.query(sql);
    try {
      const functions = await functionDefs(run);
      const triggers = await triggerDefs(run);
      await runner.startTransaction();
      for (const sql of Object.values(FUNCTIONS)) await run(sql);
      for (const trigger of triggers) {
        await run(`DROP TRIGGER ${trigger.name} ON ${trigger.table}`);
        await run(TRIGGERS[trigger.name]);
      }
      expect(await functionDefs(run)).toEqual(functions);
      expect(await triggerDefs(run)).toEqual(triggers);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('tells a definition that differs from the database', async () => {
    const runner = ds.createQueryRunner();
    await runner.connect();
    const run = (sql: string) => runner.query(sql);
    try {
      const before = await functionDefs(run);
      await runner.startTransaction();
      // One space more in the log's guard: plpgsql keeps its body as written.
      await run(FUNCTIONS.messages_forbid_rewrite.replace('RETURN NEW;', 'RETURN  NEW;'));
      expect(await functionDefs(run)).not.toEqual(before);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
