import { DataSource } from 'typeorm';
import { MemoryClock } from '../../src/memories/memory-clock.js';
import { joinLegacy } from '../support/membership.js';
import { GqlResponse, TestApp, TestUser } from '../support/test-app.js';

/** Shared steps of the memories test files (not a test file itself). */

export const MEMORY_FIELDS = `id type content confidence source legacyId conversationId
  sourceMessageId sourceTurnIndex conversationMode sourceReference referenceCount
  lastReferencedAt status validFrom validTo supersededBy { id content status } archivedAt archiveReason deletedAt
  restorableUntil createdAt updatedAt history { at action fromStatus relatedMemoryId reason details }`;

export interface MemoryView {
  id: string;
  type: string;
  content: string;
  confidence: number;
  source: string;
  legacyId: string | null;
  conversationId: string | null;
  sourceMessageId: string | null;
  sourceTurnIndex: number | null;
  conversationMode: string | null;
  sourceReference: string | null;
  referenceCount: number;
  lastReferencedAt: string | null;
  status: string;
  validFrom: string;
  validTo: string | null;
  supersededBy: { id: string; content: string; status: string } | null;
  archivedAt: string | null;
  archiveReason: string | null;
  deletedAt: string | null;
  restorableUntil: string | null;
  createdAt: string;
  updatedAt: string;
  history: {
    at: string;
    action: string;
    fromStatus: string | null;
    relatedMemoryId: string | null;
    reason: string | null;
    details: Record<string, unknown> | null;
  }[];
}

export function ok<T>(res: GqlResponse<T>): T {
  if (res.errors) throw new Error(`unexpected errors: ${JSON.stringify(res.errors)}`);
  return res.data!;
}

export function codeOf(res: GqlResponse<unknown>): unknown {
  return res.errors?.[0]?.extensions?.code;
}

export async function signIn(t: TestApp, sub: string): Promise<TestUser & { id: string }> {
  const user = await t.user(sub, { email: `${sub}@example.com`, name: sub });
  const me = ok(await t.gql<{ me: { id: string } }>('{ me { id } }', {}, user));
  return { ...user, id: me.me.id };
}

export async function createLegacy(t: TestApp, as: TestUser, name = 'Nana'): Promise<string> {
  const res = await t.gql<{ createLegacy: { id: string } }>(
    'mutation($input: CreateLegacyInput!) { createLegacy(input: $input) { id } }',
    { input: { name } },
    as,
  );
  return ok(res).createLegacy.id;
}

export async function addMember(t: TestApp, owner: TestUser, legacyId: string, invitee: TestUser) {
  await joinLegacy(t, owner, legacyId, invitee);
}

export async function startConversation(
  t: TestApp,
  as: TestUser,
  legacyId: string,
  remember?: boolean,
): Promise<string> {
  const res = await t.gql<{ startConversation: { id: string; remember: boolean } }>(
    `mutation($input: StartConversationInput!) { startConversation(input: $input) { id remember } }`,
    { input: { legacyId, ...(remember === undefined ? {} : { remember }) } },
    as,
  );
  return ok(res).startConversation.id;
}

/** The user's turn (AGENT_REPLY=off: nothing else is stored). */
export async function send(
  t: TestApp,
  as: TestUser,
  conversationId: string,
  content: string,
): Promise<string> {
  const res = await t.gql<{ sendMessage: { message: { id: string } } }>(
    `mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }`,
    { input: { conversationId, content } },
    as,
  );
  return ok(res).sendMessage.message.id;
}

export async function record(
  t: TestApp,
  as: TestUser,
  conversationId: string,
  content: string,
): Promise<string> {
  const res = await t.gql<{ recordAssistantMessage: { id: string } }>(
    `mutation($input: RecordAssistantMessageInput!) { recordAssistantMessage(input: $input) { id } }`,
    { input: { conversationId, content } },
    as,
  );
  return ok(res).recordAssistantMessage.id;
}

/** A user turn and the client's reply to it: the exchange extraction runs on. */
export async function exchange(
  t: TestApp,
  as: TestUser,
  conversationId: string,
  userText: string,
  assistantText = 'Thank you for telling me.',
): Promise<{ userMessageId: string; assistantMessageId: string }> {
  const userMessageId = await send(t, as, conversationId, userText);
  const assistantMessageId = await record(t, as, conversationId, assistantText);
  return { userMessageId, assistantMessageId };
}

export async function rememberThis(
  t: TestApp,
  as: TestUser,
  content: string,
  extra: { type?: string; legacyId?: string } = {},
): Promise<{ memory: MemoryView; outcome: string; supersededIds: string[] }> {
  const res = await t.gql<{
    rememberThis: { memory: MemoryView; outcome: string; supersededIds: string[] };
  }>(
    `mutation($input: RememberThisInput!) {
       rememberThis(input: $input) { outcome supersededIds memory { ${MEMORY_FIELDS} } } }`,
    { input: { content, ...extra } },
    as,
  );
  return ok(res).rememberThis;
}

export async function listMemories(
  t: TestApp,
  as: TestUser,
  filter: Record<string, unknown> = {},
  first = 50,
): Promise<MemoryView[]> {
  const res = await t.gql<{ memories: { nodes: MemoryView[] } }>(
    `query($filter: MemoryFilter, $first: Int) {
       memories(filter: $filter, first: $first) { nodes { ${MEMORY_FIELDS} } } }`,
    { filter, first },
    as,
  );
  return ok(res).memories.nodes;
}

export interface MemoryRow {
  id: string;
  content: string;
  type: string;
  status: string;
  reference_count: number;
  superseded_by: string | null;
  user_id: string;
  legacy_id: string | null;
}

export function rowsOf(ds: DataSource, userId: string): Promise<MemoryRow[]> {
  return ds.query(
    `SELECT id, content, type, status, reference_count, superseded_by, user_id, legacy_id
       FROM memories WHERE user_id = $1 ORDER BY created_at, id`,
    [userId],
  );
}

export async function vectorCount(ds: DataSource, ids: string[]): Promise<number> {
  const rows: { n: string }[] = await ds.query(
    `SELECT count(*) AS n FROM embeddings WHERE kind = 'memory' AND item_id = ANY($1::uuid[])`,
    [ids],
  );
  return Number(rows[0].n);
}

/** Moves the memory clock; `undefined` puts it back on real time. */
export function setNow(clock: MemoryClock, at?: Date): void {
  if (at) clock.now = () => new Date(at);
  else delete (clock as Partial<MemoryClock>).now;
}

export const DAY_MS = 86_400_000;
