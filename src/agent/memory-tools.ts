import { isUuid } from '../common/validation/uuid.js';
import { JsonSchema, validateJson } from '../llm/json-schema-lite.js';
import type { ReplyTool } from '../llm/language-model.js';

/** The memory tools the agent's model may call, and their arguments once validated. */
export type MemoryToolCall =
  | { name: 'memory_save'; content: string }
  | { name: 'memory_forget'; query: string | null; memoryIds: string[]; previousTurn: boolean }
  | { name: 'memory_lookup'; query: string };

const QUERY_MAX = 500;

const SAVE: JsonSchema = {
  type: 'object',
  properties: {
    content: {
      type: 'string',
      description:
        'What to remember about the user, as one short first-person sentence in their words, e.g. "I love gardening."',
      minLength: 1,
      maxLength: 2000,
    },
  },
  required: ['content'],
  additionalProperties: false,
};

const FORGET: JsonSchema = {
  type: 'object',
  properties: {
    query: {
      type: 'string',
      description: 'What the memories to forget are about, e.g. "my job".',
      minLength: 1,
      maxLength: QUERY_MAX,
    },
    memoryIds: {
      type: 'array',
      description: 'Ids of memories to forget, as memory_lookup gave them.',
      items: { type: 'string' },
      maxItems: 20,
    },
    previousTurn: {
      type: 'boolean',
      description:
        'True to forget what was remembered from the user\'s previous message ("don\'t remember that").',
    },
  },
  required: [],
  additionalProperties: false,
};

const LOOKUP: JsonSchema = {
  type: 'object',
  properties: {
    query: {
      type: 'string',
      description: 'What the user asks you to remember about, e.g. "my sister".',
      minLength: 1,
      maxLength: QUERY_MAX,
    },
  },
  required: ['query'],
  additionalProperties: false,
};

export const MEMORY_TOOLS: ReplyTool[] = [
  {
    name: 'memory_save',
    description:
      'Save a memory about the user when they explicitly ask you to remember something ("remember that I ...", "please remember ..."). Never for things they merely mention. If the result says saved: false, tell the user that nothing was saved and why.',
    parameters: SAVE,
  },
  {
    name: 'memory_forget',
    description:
      'Forget memories about the user when they ask you to ("forget what I said about X", "don\'t remember that"). Give exactly one of query, memoryIds or previousTurn. Forgotten memories can be restored for a while.',
    parameters: FORGET,
  },
  {
    name: 'memory_lookup',
    description:
      'Look up what Keepsake remembers about something ("what do you remember about X?"): the user\'s memories, facts and past conversations.',
    parameters: LOOKUP,
  },
];

export type ParsedToolCall = { ok: true; call: MemoryToolCall } | { ok: false; error: string };

/** The model's arguments, checked against the tool's schema and its own rules. */
export function parseMemoryToolCall(name: string, argumentsJson: string): ParsedToolCall {
  const tool = MEMORY_TOOLS.find((t) => t.name === name);
  if (!tool) return { ok: false, error: `There is no tool named ${JSON.stringify(name)}.` };
  let args: unknown;
  try {
    args = argumentsJson.trim() === '' ? {} : JSON.parse(argumentsJson);
  } catch {
    return { ok: false, error: 'The arguments are not valid JSON.' };
  }
  const problems = validateJson(tool.parameters, args);
  if (problems.length > 0) {
    return { ok: false, error: `Invalid arguments: ${problems.slice(0, 3).join('; ')}` };
  }
  const a = args as Record<string, unknown>;
  if (name === 'memory_save') {
    const content = (a.content as string).trim();
    if (!content) return { ok: false, error: 'Invalid arguments: $.content is blank' };
    return { ok: true, call: { name, content } };
  }
  if (name === 'memory_lookup') {
    const query = (a.query as string).trim();
    if (!query) return { ok: false, error: 'Invalid arguments: $.query is blank' };
    return { ok: true, call: { name, query } };
  }
  const query = typeof a.query === 'string' && a.query.trim() ? a.query.trim() : null;
  const memoryIds = (a.memoryIds as string[] | undefined) ?? [];
  const previousTurn = a.previousTurn === true;
  const given = [query !== null, memoryIds.length > 0, previousTurn].filter(Boolean).length;
  if (given !== 1) {
    return {
      ok: false,
      error: 'Invalid arguments: give exactly one of query, memoryIds or previousTurn.',
    };
  }
  const bad = memoryIds.find((id) => !isUuid(id));
  if (bad !== undefined) {
    return { ok: false, error: `Invalid arguments: ${JSON.stringify(bad)} is not a memory id.` };
  }
  return {
    ok: true,
    call: {
      name: 'memory_forget',
      query,
      memoryIds: memoryIds.map((id) => id.toLowerCase()),
      previousTurn,
    },
  };
}
