import type { ServerResponse } from 'node:http';

/** A function call the fake model makes. */
export interface FakeToolCall {
  name: string;
  /** An object is serialised; a string is sent as written (e.g. invalid JSON). */
  arguments: unknown;
  id?: string;
}

interface WireCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export function toolCallsOf(calls: FakeToolCall[], reply: number): WireCall[] {
  return calls.map((c, i) => ({
    id: c.id ?? `call_fake_${reply}_${i}`,
    type: 'function',
    function: {
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    },
  }));
}

/**
 * A reply whose message calls functions (finish_reason tool_calls), whole or streamed as the
 * OpenAI API streams them: each call's id and name first, its arguments in two later pieces.
 */
export function writeToolCallsReply(
  res: ServerResponse,
  body: { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } },
  reply: {
    id: number;
    content: string;
    calls: WireCall[];
    usage: { prompt_tokens: number; completion_tokens: number };
  },
): void {
  const usage = {
    ...reply.usage,
    total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens,
  };
  const base = {
    id: `chatcmpl-fake-${reply.id}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'fake-llm',
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: reply.content || null,
              tool_calls: reply.calls,
              refusal: null,
            },
            finish_reason: 'tool_calls',
            logprobs: null,
          },
        ],
        usage,
      }),
    );
    return;
  }
  const chunk = { ...base, object: 'chat.completion.chunk' };
  const send = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
  const delta = (d: unknown, finish: string | null = null) =>
    send({ ...chunk, choices: [{ index: 0, delta: d, finish_reason: finish }] });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  delta({ role: 'assistant', content: reply.content || null });
  reply.calls.forEach((c, index) => {
    const args = c.function.arguments;
    const half = Math.ceil(args.length / 2);
    delta({
      tool_calls: [
        { index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } },
      ],
    });
    delta({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] });
    delta({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] });
  });
  delta({}, 'tool_calls');
  if (body.stream_options?.include_usage) send({ ...chunk, choices: [], usage });
  res.write('data: [DONE]\n\n');
  res.end();
}
