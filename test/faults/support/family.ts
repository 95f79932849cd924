import { call, Gate, Outcome, retryWhileLost, sha256, Talk, upload } from './clients.js';
import { sleep } from './service.js';

/** Everything clients asked for, and what the service answered: the truth the checks hold it to. */
export class Ledger {
  /** Turns by clientMessageId; `acked` once a sendMessage answered with the turn. */
  readonly turns = new Map<
    string,
    { conversationId: string; content: string; acked: boolean; messageId?: string }
  >();
  readonly imports: {
    legacyId: string;
    title: string;
    contents: string[];
    acked: boolean;
    conversationId?: string;
  }[] = [];
  readonly stories: {
    legacyId: string;
    title: string;
    sha256: string;
    size: number;
    acked: boolean;
    id?: string;
  }[] = [];
  readonly facts: {
    legacyId: string;
    content: string;
    acked: boolean;
    id?: string;
    shared: 'yes' | 'unknown' | 'no';
  }[] = [];
  readonly memories: {
    content: string;
    acked: boolean;
    id?: string;
    forgotten: 'yes' | 'unknown' | 'no';
  }[] = [];
  readonly periods: { legacyId: string; start: string; acked: boolean }[] = [];
  /** Answers no client should ever get (INTERNAL_SERVER_ERROR, a malformed body). */
  readonly anomalies: string[] = [];
  readonly counts = { ok: 0, refused: 0, lost: 0 };

  note<T>(op: string, outcome: Outcome<T>): Outcome<T> {
    this.counts[outcome.kind]++;
    if (outcome.kind === 'refused' && !EXPECTED_REFUSALS.has(outcome.code)) {
      this.anomalies.push(`${op}: ${outcome.code} ${outcome.message}`);
    }
    return outcome;
  }

  get acknowledged(): number {
    const n = (items: { acked: boolean }[]) => items.filter((i) => i.acked).length;
    return (
      n([...this.turns.values()]) +
      n(this.imports) +
      n(this.stories) +
      n(this.facts) +
      n(this.memories) +
      this.facts.filter((f) => f.shared === 'yes').length +
      this.memories.filter((m) => m.forgotten === 'yes').length
    );
  }
}

/**
 * Refusals a busy or restarting service may answer: nothing was done (UNAVAILABLE), a limit was
 * met (RATE_LIMITED), or the thing asked about went with a kill before it was acknowledged.
 */
const EXPECTED_REFUSALS = new Set(['UNAVAILABLE', 'RATE_LIMITED', 'NOT_FOUND', 'CONFLICT']);

const SEND = `mutation($input: SendMessageInput!) { sendMessage(input: $input) {
  message { id turnIndex } } }`;

/** One family member: their own legacy and conversations, and a loop of what people do. */
export class Member {
  private n = 0;
  private readonly conversations: string[] = [];
  /** Sends whose answer was lost: sent again, with the same clientMessageId, after a restart. */
  readonly unanswered: string[] = [];

  constructor(
    readonly name: string,
    private readonly token: string,
    private readonly ledger: Ledger,
    private readonly random: () => number,
    private readonly base: () => string,
    private readonly gate: Gate,
    public legacyId = '',
  ) {}

  private talk = () => new Talk(this.random);

  private gql<T>(query: string, variables: Record<string, unknown>, op: string) {
    return call<T>(this.base(), this.token, query, variables).then((o) => this.ledger.note(op, o));
  }

  /** A legacy and two conversations with remember on, retried until the service answers. */
  async setUp(): Promise<void> {
    const legacy = await retryWhileLost(this.gate, () =>
      this.gql<{ createLegacy: { id: string } }>(
        `mutation($n: String!) { createLegacy(input: { name: $n }) { id } }`,
        { n: `Grandpa of ${this.name}` },
        'createLegacy',
      ),
    );
    if (legacy.kind !== 'ok') throw new Error(`createLegacy: ${JSON.stringify(legacy)}`);
    this.legacyId = legacy.data.createLegacy.id;
    for (const title of ['Summers', 'Letters']) {
      const started = await retryWhileLost(this.gate, () =>
        this.gql<{ startConversation: { id: string } }>(
          `mutation($l: ID!, $t: String) { startConversation(input: { legacyId: $l, title: $t, remember: true }) { id } }`,
          { l: this.legacyId, t: title },
          'startConversation',
        ),
      );
      if (started.kind !== 'ok') throw new Error(`startConversation: ${JSON.stringify(started)}`);
      this.conversations.push(started.data.startConversation.id);
    }
  }

  /** One thing a member does, chosen by the seeded generator. */
  async act(): Promise<void> {
    await this.gate.pass();
    const r = this.random();
    if (r < 0.45) return this.send();
    if (r < 0.55) return this.importConversation();
    if (r < 0.65) return this.upload();
    if (r < 0.77) return this.addFact();
    if (r < 0.9) return this.remember();
    if (r < 0.95) return this.forget();
    if (r < 0.98) return this.summarizeNow();
    return this.summarizePeriod();
  }

  private async send(clientMessageId?: string): Promise<void> {
    const id = clientMessageId ?? `${this.name}-m${++this.n}`;
    let turn = this.ledger.turns.get(id);
    if (!turn) {
      const conversationId = this.talk().pick(this.conversations);
      turn = { conversationId, content: this.talk().sentence(this.n), acked: false };
      this.ledger.turns.set(id, turn);
    }
    const outcome = await this.gql<{ sendMessage: { message: { id: string } } }>(
      SEND,
      {
        input: { conversationId: turn.conversationId, content: turn.content, clientMessageId: id },
      },
      'sendMessage',
    );
    if (outcome.kind === 'ok') {
      turn.acked = true;
      turn.messageId = outcome.data.sendMessage.message.id;
    } else if (outcome.kind === 'lost' && !this.unanswered.includes(id)) {
      this.unanswered.push(id);
    }
  }

  /** Sends again every send whose answer was lost: each must be stored once. */
  async resendUnanswered(): Promise<void> {
    for (const id of this.unanswered.splice(0)) {
      await this.gate.pass();
      await this.send(id);
      const turn = this.ledger.turns.get(id)!;
      if (!turn.acked && !this.unanswered.includes(id)) this.unanswered.push(id);
    }
  }

  private async importConversation(): Promise<void> {
    const talk = this.talk();
    const count = 8 + Math.floor(this.random() * 30);
    const start = Date.UTC(2024, 0, 1) + Math.floor(this.random() * 300) * 86_400_000;
    const contents = Array.from({ length: count }, (_, i) => talk.sentence(this.n * 1000 + i));
    const title = `${this.name} import ${++this.n}`;
    const entry = {
      legacyId: this.legacyId,
      title,
      contents,
      acked: false,
    } as Ledger['imports'][0];
    this.ledger.imports.push(entry);
    const outcome = await this.gql<{ importConversation: { conversation: { id: string } } }>(
      `mutation($input: ImportConversationInput!) { importConversation(input: $input) {
        conversation { id } importedCount } }`,
      {
        input: {
          legacyId: this.legacyId,
          title,
          messages: contents.map((content, i) => ({
            role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
            content,
            occurredAt: new Date(start + i * 60_000).toISOString(),
          })),
        },
      },
      'importConversation',
    );
    if (outcome.kind === 'ok') {
      entry.acked = true;
      entry.conversationId = outcome.data.importConversation.conversation.id;
    }
  }

  private async upload(): Promise<void> {
    const text = this.talk().document(++this.n);
    const bytes = new TextEncoder().encode(text);
    const title = `${this.name} notes ${this.n}`;
    const entry = {
      legacyId: this.legacyId,
      title,
      sha256: sha256(bytes),
      size: bytes.byteLength,
      acked: false,
    } as Ledger['stories'][0];
    this.ledger.stories.push(entry);
    const outcome = this.ledger.note(
      'upload',
      await upload(this.base(), this.token, this.legacyId, bytes, `notes-${this.n}.md`, title),
    );
    if (outcome.kind === 'ok') {
      entry.acked = true;
      entry.id = outcome.data.id;
    }
  }

  private async addFact(): Promise<void> {
    const content = `${this.talk().sentence(++this.n)} (fact ${this.name}-${this.n})`;
    const entry = {
      legacyId: this.legacyId,
      content,
      acked: false,
      shared: 'no',
    } as Ledger['facts'][0];
    this.ledger.facts.push(entry);
    const added = await this.gql<{ addFact: { id: string } }>(
      `mutation($l: ID!, $c: String!) { addFact(input: { legacyId: $l, content: $c, category: HOBBY }) { id } }`,
      { l: this.legacyId, c: content },
      'addFact',
    );
    if (added.kind !== 'ok') return;
    entry.acked = true;
    entry.id = added.data.addFact.id;
    if (this.random() < 0.6) {
      entry.shared = 'unknown';
      const shared = await this.gql(
        `mutation($id: ID!) { setFactVisibility(id: $id, visibility: SHARED) { id } }`,
        { id: entry.id },
        'setFactVisibility',
      );
      entry.shared = shared.kind === 'ok' ? 'yes' : shared.kind === 'lost' ? 'unknown' : 'no';
    }
  }

  private async remember(): Promise<void> {
    const content = `I want to remember that ${this.talk().sentence(++this.n)} [${this.name}-${this.n}]`;
    const entry = { content, acked: false, forgotten: 'no' } as Ledger['memories'][0];
    this.ledger.memories.push(entry);
    const saved = await this.gql<{ rememberThis: { memory: { id: string } } }>(
      `mutation($l: ID, $c: String!) { rememberThis(input: { legacyId: $l, content: $c }) { memory { id } } }`,
      { l: this.legacyId, c: content },
      'rememberThis',
    );
    if (saved.kind === 'ok') {
      entry.acked = true;
      entry.id = saved.data.rememberThis.memory.id;
    }
  }

  private async forget(): Promise<void> {
    const mine = this.ledger.memories.filter(
      (m) => m.acked && m.forgotten === 'no' && m.content.includes(`[${this.name}-`),
    );
    if (mine.length === 0) return this.remember();
    const entry = this.talk().pick(mine);
    entry.forgotten = 'unknown';
    const forgotten = await this.gql(
      `mutation($id: ID!) { forgetMemory(id: $id) { id status } }`,
      { id: entry.id },
      'forgetMemory',
    );
    entry.forgotten =
      forgotten.kind === 'ok' ? 'yes' : forgotten.kind === 'lost' ? 'unknown' : 'no';
  }

  private async summarizeNow(): Promise<void> {
    await this.gql(
      `mutation($c: ID!) { summarizeNow(conversationId: $c) { deferred unsummarizedTurns } }`,
      { c: this.talk().pick(this.conversations) },
      'summarizeNow',
    );
  }

  private async summarizePeriod(): Promise<void> {
    const day = new Date(Date.UTC(2024, 0, 1) + Math.floor(this.random() * 40) * 7 * 86_400_000);
    // Weeks start on Monday.
    day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
    const start = day.toISOString().slice(0, 10);
    const entry = { legacyId: this.legacyId, start, acked: false };
    this.ledger.periods.push(entry);
    const outcome = await this.gql(
      `mutation($l: ID!, $s: String!) { summarizePeriod(input: { legacyId: $l, period: WEEK, start: $s }) { outcome } }`,
      { l: this.legacyId, s: start },
      'summarizePeriod',
    );
    entry.acked = outcome.kind === 'ok';
  }

  /** Acts until `stop()` answers true, pausing a little between actions as people do. */
  async run(stop: () => boolean): Promise<void> {
    while (!stop()) {
      await this.act();
      await sleep(20 + this.random() * 200);
    }
  }
}
