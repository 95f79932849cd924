import type { ImportedMessageInput, MessageRole } from '../gql/graphql';

export interface ConversationFile {
  title: string | null;
  messages: ImportedMessageInput[];
}

/**
 * Reads a conversation export: `{ "title"?, "messages": [...] }` or a bare array of messages, each
 * `{ "role": "user" | "assistant", "content", "occurredAt" }` (`timestamp` and `createdAt` are
 * accepted for occurredAt, as other systems name it). Throws with the first problem found.
 */
export function parseConversationFile(text: string): ConversationFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('The file is not JSON.');
  }
  const body = Array.isArray(json) ? { messages: json } : (json as Record<string, unknown>);
  if (!body || !Array.isArray(body.messages)) {
    throw new Error('The file has no "messages" list.');
  }
  const messages = body.messages.map((raw: unknown, i: number): ImportedMessageInput => {
    const m = raw as Record<string, unknown>;
    const role = String(m?.role ?? '').toUpperCase();
    if (role !== 'USER' && role !== 'ASSISTANT') {
      throw new Error(`Message ${i + 1}: role must be "user" or "assistant".`);
    }
    if (typeof m.content !== 'string' || m.content.trim() === '') {
      throw new Error(`Message ${i + 1}: content is missing.`);
    }
    const at = m.occurredAt ?? m.timestamp ?? m.createdAt;
    if (typeof at !== 'string' || Number.isNaN(Date.parse(at))) {
      throw new Error(`Message ${i + 1}: occurredAt must be a date and time.`);
    }
    const metadata =
      m.metadata && typeof m.metadata === 'object' ? (m.metadata as Record<string, unknown>) : null;
    return {
      role: role as MessageRole,
      content: m.content,
      occurredAt: new Date(at).toISOString(),
      metadata,
    };
  });
  if (messages.length === 0) throw new Error('The file has no messages.');
  return { title: typeof body.title === 'string' ? body.title : null, messages };
}
