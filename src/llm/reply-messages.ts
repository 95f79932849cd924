import type OpenAI from 'openai';
import type { ReplyInput } from './language-model.js';
import { cleanName } from '../identity/display-name.js';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ReplyMessage = ReplyInput['messages'][number];

/** What OpenAI's `name` may hold: letters, digits, `_` and `-`, 1 to 64 of them. */
const NAME_MAX = 64;

/**
 * A member's turn as a model reads it wherever the turn itself carries no author: led by their
 * marked name (`"Olga": …`, identity/display-name.ts), as the embedded model's prompt and the
 * offline notice have it. A turn without a speaker (one member alone, the agent) is as it is.
 */
export function labelledContent(message: ReplyMessage): string {
  return message.speaker ? `${message.speaker}: ${message.content}` : message.content;
}

/**
 * A display name as OpenAI's `name` takes it (`^[a-zA-Z0-9_-]{1,64}$`): accents taken off,
 * anything else a `_`. Null when nothing of it is left (a name in another script).
 */
export function openAiName(speaker: string): string | null {
  let name: unknown = speaker;
  try {
    name = JSON.parse(speaker); // marked: "Olga"
  } catch {
    // not marked: taken as it is
  }
  const clean = cleanName(typeof name === 'string' ? name : null);
  if (!clean) return null;
  const ascii = clean
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^a-zA-Z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, NAME_MAX)
    .replace(/_+$/, '');
  return ascii === '' ? null : ascii;
}

/**
 * The reply's messages for an OpenAI-compatible endpoint. In a together conversation each
 * member's turn says who wrote it twice over: OpenAI's `name` (distinct for each member, however
 * alike their names: `Ana`, `Ana_2`; `member_1` for a name with no Latin letters), and the label
 * its content starts with, which a server that drops `name` (many compatible servers do) still
 * passes on. The system prompt tells the model what the labels mean (agent-reply.service.ts).
 */
export function openAiReplyMessages(input: ReplyInput): ChatMessage[] {
  const names = new Map<string, string>();
  const taken = new Set<string>();
  const nameOf = (speaker: string): string => {
    const known = names.get(speaker);
    if (known) return known;
    const base = openAiName(speaker) ?? 'member';
    let name = base === 'member' ? `member_${names.size + 1}` : base;
    for (let n = 2; taken.has(name); n++) {
      const suffix = `_${n}`;
      name = `${base.slice(0, NAME_MAX - suffix.length)}${suffix}`;
    }
    names.set(speaker, name);
    taken.add(name);
    return name;
  };
  return [
    { role: 'system', content: input.system },
    ...input.messages.map((m): ChatMessage => {
      if (m.role !== 'USER') return { role: 'assistant', content: m.content };
      if (!m.speaker) return { role: 'user', content: m.content };
      return { role: 'user', name: nameOf(m.speaker), content: labelledContent(m) };
    }),
  ];
}
