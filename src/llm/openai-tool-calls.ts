import OpenAI, { APIError } from 'openai';
import { toWireSchema } from './json-schema-lite.js';
import type { ReplyTools } from './language-model.js';
import { describeError } from './openai-transport.js';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** Rounds of tool calls in one reply; the request after the last offers no tools. */
export const MAX_TOOL_ROUNDS = 3;

/** A function call the model made, arguments as the JSON text it wrote. */
export interface ToolCallOut {
  id: string;
  name: string;
  arguments: string;
}

/** The tools as the chat completions API takes them. */
export function wireTools(tools: ReplyTools): OpenAI.Chat.Completions.ChatCompletionTool[] {
  return tools.definitions.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: toWireSchema(t.parameters) },
  }));
}

/**
 * Streamed tool calls arrive in pieces: the id and name in the first chunk of each call, the
 * arguments spread over later chunks, all keyed by `index`.
 */
export class ToolCallAccumulator {
  private readonly calls = new Map<number, ToolCallOut>();

  add(deltas: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] | undefined) {
    for (const d of deltas ?? []) {
      const call = this.calls.get(d.index) ?? { id: '', name: '', arguments: '' };
      if (d.id) call.id = d.id;
      if (d.function?.name) call.name += d.function.name;
      if (d.function?.arguments) call.arguments += d.function.arguments;
      this.calls.set(d.index, call);
    }
  }

  get result(): ToolCallOut[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({ ...c, id: c.id || `call_${index}` }));
  }
}

/** Function calls of a whole (not streamed) completion message. */
export function toolCallsOf(
  message: OpenAI.Chat.Completions.ChatCompletionMessage | undefined,
): ToolCallOut[] {
  return (message?.tool_calls ?? []).flatMap((c, i) =>
    c.type === 'function'
      ? [{ id: c.id || `call_${i}`, name: c.function.name, arguments: c.function.arguments ?? '' }]
      : [],
  );
}

/**
 * Runs the calls and appends the exchange to the conversation: the assistant message that made
 * them, then one tool message with each result.
 */
export async function answerToolCalls(
  messages: ChatMessage[],
  text: string,
  calls: ToolCallOut[],
  tools: ReplyTools,
): Promise<void> {
  messages.push({
    role: 'assistant',
    content: text || null,
    tool_calls: calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    })),
  });
  // In order: a later call may depend on an earlier one ("save this, then look it up").
  for (const call of calls) {
    messages.push({
      role: 'tool',
      tool_call_id: call.id,
      content: await tools.execute(call.name, call.arguments),
    });
  }
}

/** A server without tool calling answers 400 or 422 about the `tools` parameter. */
export function rejectsTools(err: unknown): boolean {
  return (
    err instanceof APIError &&
    (err.status === 400 || err.status === 422) &&
    /\btools?\b|tool_choice|function calling|function_call/i.test(describeError(err))
  );
}
