import { createHash } from 'node:crypto';
import { sleep } from './service.js';

/** What became of one request: answered, refused with a GraphQL error, or lost on the way. */
export type Outcome<T> =
  | { kind: 'ok'; data: T }
  | { kind: 'refused'; code: string; reason?: string; message: string }
  | { kind: 'lost'; error: string };

/**
 * A request whose answer never came (the process died under it) may or may not have been
 * applied: the ledger treats it as unknown. One with an answer is acknowledged or refused.
 */
export async function call<T>(
  base: string,
  token: string,
  query: string,
  variables: Record<string, unknown>,
  timeoutMs = 60_000,
): Promise<Outcome<T>> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await res.text();
  } catch (err) {
    return { kind: 'lost', error: String((err as Error).cause ?? err) };
  }
  let body: {
    data?: T;
    errors?: { message: string; extensions?: { code?: string; reason?: string } }[];
  };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { kind: 'refused', code: `HTTP_${res.status}`, message: text.slice(0, 200) };
  }
  if (body.errors?.length) {
    const e = body.errors[0];
    return {
      kind: 'refused',
      code: e.extensions?.code ?? 'UNKNOWN',
      reason: e.extensions?.reason,
      message: e.message,
    };
  }
  return { kind: 'ok', data: body.data as T };
}

/** POST /legacies/:id/documents, as the console uploads a document. */
export async function upload(
  base: string,
  token: string,
  legacyId: string,
  bytes: Uint8Array,
  fileName: string,
  title: string,
): Promise<Outcome<{ id: string }>> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), fileName);
  form.append('title', title);
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${base}/legacies/${legacyId}/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
      signal: AbortSignal.timeout(60_000),
    });
    text = await res.text();
  } catch (err) {
    return { kind: 'lost', error: String((err as Error).cause ?? err) };
  }
  let body: {
    id?: string;
    errors?: { message: string; extensions?: { code?: string; reason?: string } }[];
  };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { kind: 'refused', code: `HTTP_${res.status}`, message: text.slice(0, 200) };
  }
  if (res.status >= 200 && res.status < 300 && body.id)
    return { kind: 'ok', data: { id: body.id } };
  const e = body.errors?.[0];
  return {
    kind: 'refused',
    code: e?.extensions?.code ?? `HTTP_${res.status}`,
    reason: e?.extensions?.reason,
    message: e?.message ?? text.slice(0, 200),
  };
}

export const sha256 = (bytes: Uint8Array | string) =>
  createHash('sha256').update(bytes).digest('hex');

const PEOPLE = ['Rosa', 'Anton', 'Miriam', 'Teodor', 'Ines', 'Walter', 'Ada', 'Jonas'];
const PLACES = ['Lisbon', 'Porto', 'the lake house', 'Vienna', 'the old mill', 'Krakow'];
const THINGS = [
  'grew tomatoes',
  'fixed clocks',
  'sang in the choir',
  'kept bees',
  'built a boat',
  'wrote letters every Sunday',
  'baked rye bread',
  'walked the dog at dawn',
];
const FEELINGS = ['happy', 'proud', 'homesick', 'grateful', 'tired', 'calm'];

/** Sentences people say about someone they remember, varied by the seeded generator. */
export class Talk {
  constructor(private readonly random: () => number) {}

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  sentence(n: number): string {
    const kinds = [
      () => `${this.pick(PEOPLE)} ${this.pick(THINGS)} in ${this.pick(PLACES)} (${n}).`,
      () =>
        `I remember ${this.pick(PEOPLE)} was ${this.pick(FEELINGS)} when we went to ${this.pick(PLACES)} (${n}).`,
      () => `My favourite memory is how he ${this.pick(THINGS)} with ${this.pick(PEOPLE)} (${n}).`,
      () =>
        `In ${1950 + Math.floor(this.random() * 60)} he moved to ${this.pick(PLACES)} and ${this.pick(THINGS)} (${n}).`,
    ];
    return this.pick(kinds)();
  }

  document(n: number): string {
    const paragraphs = 3 + Math.floor(this.random() * 8);
    const out = [`# Notes ${n}`];
    for (let p = 0; p < paragraphs; p++) {
      out.push(Array.from({ length: 4 }, (_, i) => this.sentence(n * 100 + p * 10 + i)).join(' '));
    }
    return out.join('\n\n');
  }
}

/** Resolves when `up()` says the service answers again: clients wait here while it is down. */
export class Gate {
  private open = true;
  private waiters: (() => void)[] = [];

  close(): void {
    this.open = false;
  }

  release(): void {
    this.open = true;
    for (const w of this.waiters.splice(0)) w();
  }

  async pass(): Promise<void> {
    while (!this.open) await new Promise<void>((r) => this.waiters.push(r));
  }
}

export async function retryWhileLost<T>(
  gate: Gate,
  attempt: () => Promise<Outcome<T>>,
  tries = 20,
): Promise<Outcome<T>> {
  let last: Outcome<T> = { kind: 'lost', error: 'not tried' };
  for (let i = 0; i < tries; i++) {
    await gate.pass();
    last = await attempt();
    if (last.kind !== 'lost' && !(last.kind === 'refused' && last.code === 'UNAVAILABLE')) {
      return last;
    }
    await sleep(200);
  }
  return last;
}

const TURNS = `query($id: ID!, $after: String) { conversation(id: $id) {
  messages(first: 100, after: $after) {
    edges { node { id clientMessageId content } } pageInfo { hasNextPage endCursor } } } }`;

interface TurnsPage {
  conversation: {
    messages: {
      edges: { node: { id: string; clientMessageId: string | null; content: string } }[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
    };
  };
}

/** Every turn of a conversation, as its member reads them, page by page. */
export async function readTurns(
  base: string,
  token: string,
  conversationId: string,
): Promise<{ id: string; clientMessageId: string | null; content: string }[]> {
  const turns: { id: string; clientMessageId: string | null; content: string }[] = [];
  let after: string | null = null;
  for (;;) {
    const page: Outcome<TurnsPage> = await call<TurnsPage>(base, token, TURNS, {
      id: conversationId,
      after,
    });
    if (page.kind !== 'ok') throw new Error(`reading turns: ${JSON.stringify(page)}`);
    const { edges, pageInfo }: TurnsPage['conversation']['messages'] =
      page.data.conversation.messages;
    turns.push(...edges.map((e) => e.node));
    if (!pageInfo.hasNextPage) return turns;
    after = pageInfo.endCursor;
  }
}
