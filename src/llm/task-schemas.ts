import { JsonSchema, validateJson } from './json-schema-lite.js';
import { factProblem, memoryProblem, summaryProblem } from './grounding.js';
import {
  ExtractMemoriesInput,
  ExtractedMemories,
  FACT_CATEGORIES,
  MEMORY_TYPES,
  PeriodSummaryText,
  QueryRewrite,
  SummarizeTurnsInput,
  TurnsSummary,
} from './language-model.js';

const stringList = (maxItems: number): JsonSchema => ({
  type: 'array',
  maxItems,
  items: { type: 'string', minLength: 1, maxLength: 500 },
});

const confidence: JsonSchema = { type: 'number', minimum: 0, maximum: 1 };

export const TURNS_SUMMARY_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    // A sentence at least: a grammar made from this cannot close the summary on ", ".
    summary: { type: 'string', minLength: 20, maxLength: 2000 },
    structured: {
      type: 'object',
      properties: {
        facts: stringList(30),
        preferences: stringList(30),
        decisions: stringList(30),
        todos: stringList(30),
        entities: stringList(50),
      },
      required: ['facts', 'preferences', 'decisions', 'todos', 'entities'],
      additionalProperties: false,
    },
    facts: {
      type: 'array',
      maxItems: 30,
      items: {
        type: 'object',
        properties: {
          content: { type: 'string', minLength: 1, maxLength: 500 },
          category: { type: 'string', enum: FACT_CATEGORIES },
          confidence,
          sourceTurnIndexes: {
            type: 'array',
            minItems: 1,
            maxItems: 10,
            items: { type: 'integer', minimum: 0 },
          },
        },
        required: ['content', 'category', 'confidence', 'sourceTurnIndexes'],
        additionalProperties: false,
      },
    },
  },
  required: ['summary', 'structured', 'facts'],
  additionalProperties: false,
};

export const MEMORIES_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    memories: {
      type: 'array',
      maxItems: 3,
      items: {
        type: 'object',
        properties: {
          content: { type: 'string', minLength: 1, maxLength: 500 },
          type: { type: 'string', enum: MEMORY_TYPES },
          confidence,
        },
        required: ['content', 'type', 'confidence'],
        additionalProperties: false,
      },
    },
  },
  required: ['memories'],
  additionalProperties: false,
};

/**
 * List entries may be blank (parsePeriodSummary drops them), so a stray "" does not cost the
 * whole answer; the caps match the prompt's "at most" numbers.
 */
const periodList = (maxItems: number, maxLength: number): JsonSchema => ({
  type: 'array',
  maxItems,
  items: { type: 'string', maxLength },
});

export const PERIOD_SUMMARY_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    summary: { type: 'string', minLength: 20, maxLength: 2000 },
    emotionalTone: { type: 'string', minLength: 1, maxLength: 200 },
    keyThemes: periodList(8, 200),
    recurringPatterns: periodList(5, 500),
    people: periodList(15, 200),
    places: periodList(15, 200),
  },
  required: ['summary', 'emotionalTone', 'keyThemes', 'recurringPatterns', 'people', 'places'],
  additionalProperties: false,
};

export type Parsed<T> =
  | {
      ok: true;
      value: T;
      /** Items left out because what was said does not carry them (grounding.ts), with why. */
      dropped?: string[];
    }
  | { ok: false; reason: string; problems: string[]; excerpt: string };

/**
 * JSON text from a model's message. A single surrounding ```json fence is tolerated (models in
 * json_object mode add one); anything else around the object is not.
 */
function parseJsonText(raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/i.exec(raw);
  const body = fenced ? fenced[1] : raw;
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

function parseAgainst<T>(
  raw: string,
  schema: JsonSchema,
  extraChecks: (value: T) => string[] = () => [],
): Parsed<T> {
  const excerpt = raw.slice(0, 300);
  const json = parseJsonText(raw);
  if (!json.ok) {
    return {
      ok: false,
      reason: 'not JSON',
      problems: [`the answer is not JSON (${json.error})`],
      excerpt,
    };
  }
  const problems = validateJson(schema, json.value);
  if (problems.length > 0) return { ok: false, reason: 'schema violation', problems, excerpt };
  const extra = extraChecks(json.value as T);
  if (extra.length > 0)
    return { ok: false, reason: 'inconsistent with the input', problems: extra, excerpt };
  return { ok: true, value: json.value as T };
}

/**
 * The JSON schema of a span's summary, with its facts' sourceTurnIndexes limited to the span's
 * turn numbers: a grammar made from it cannot name a turn outside the span.
 */
export function turnsSummarySchema(input: SummarizeTurnsInput): JsonSchema {
  const base = TURNS_SUMMARY_SCHEMA as Extract<JsonSchema, { type: 'object' }>;
  const facts = base.properties.facts as Extract<JsonSchema, { type: 'array' }>;
  const fact = facts.items as Extract<JsonSchema, { type: 'object' }>;
  const turnIndexes = input.turns.map((t) => t.turnIndex);
  return {
    ...base,
    properties: {
      ...base.properties,
      facts: {
        ...facts,
        items: {
          ...fact,
          properties: {
            ...fact.properties,
            sourceTurnIndexes: {
              type: 'array',
              minItems: 1,
              maxItems: 10,
              items: { type: 'integer', minimum: 0, enum: turnIndexes },
            },
          },
        },
      },
    },
  };
}

/**
 * Validated against the span: the summary must read as one and be carried by the span (else
 * the whole answer is refused), every source turn must lie in the span, and a fact is kept only
 * when it names the legacy and a member's turn among its sources says it.
 */
export function parseTurnsSummary(raw: string, input: SummarizeTurnsInput): Parsed<TurnsSummary> {
  const known = new Set(input.turns.map((t) => t.turnIndex));
  const parsed = parseAgainst<TurnsSummary>(raw, TURNS_SUMMARY_SCHEMA, (value) => {
    const problems = value.facts.flatMap((fact, i) =>
      fact.sourceTurnIndexes
        .filter((n) => !known.has(n))
        .map((n) => `$.facts[${i}].sourceTurnIndexes: turn ${n} is not in the span`),
    );
    const summary = summaryProblem(
      value.summary,
      input.turns.map((t) => t.content),
    );
    if (summary) problems.push(`$.summary: ${summary}`);
    return problems;
  });
  if (!parsed.ok) return parsed;
  const byIndex = new Map(input.turns.map((t) => [t.turnIndex, t]));
  const dropped: string[] = [];
  const facts = parsed.value.facts.filter((fact) => {
    const said = fact.sourceTurnIndexes
      .map((n) => byIndex.get(n))
      .filter((t) => t?.role === 'USER')
      .map((t) => t!.content);
    const problem =
      said.length === 0
        ? 'no member turn among its sources'
        : factProblem(fact.content, input.legacyName, said);
    if (problem) dropped.push(`fact "${fact.content.slice(0, 80)}": ${problem}`);
    return problem === null;
  });
  return {
    ok: true,
    value: { ...parsed.value, summary: parsed.value.summary.trim(), facts },
    dropped,
  };
}

/** Validated, then only the memories the user's own words carry (grounding.ts). */
export function parseMemories(raw: string, input: ExtractMemoriesInput): Parsed<ExtractedMemories> {
  const parsed = parseAgainst<ExtractedMemories>(raw, MEMORIES_SCHEMA);
  if (!parsed.ok) return parsed;
  const dropped: string[] = [];
  const memories = parsed.value.memories.filter((memory) => {
    const problem = memoryProblem(memory.content, input.userTurn, input.assistantTurn);
    if (problem) dropped.push(`memory "${memory.content.slice(0, 80)}": ${problem}`);
    return problem === null;
  });
  return { ok: true, value: { memories }, dropped };
}

/** Validated, then tidied: strings trimmed, blank and repeated list entries dropped. */
export function parsePeriodSummary(raw: string): Parsed<PeriodSummaryText> {
  const parsed = parseAgainst<PeriodSummaryText>(raw, PERIOD_SUMMARY_SCHEMA, (value) => {
    // A period's summary rewords summaries of summaries: it must read as one and copy no
    // example; how closely it keeps to their words is not asked.
    const problem = summaryProblem(value.summary, []);
    return problem ? [`$.summary: ${problem}`] : [];
  });
  if (!parsed.ok) return parsed;
  const v = parsed.value;
  return {
    ok: true,
    value: {
      summary: v.summary.trim(),
      emotionalTone: v.emotionalTone.trim(),
      keyThemes: distinct(v.keyThemes),
      recurringPatterns: distinct(v.recurringPatterns),
      people: distinct(v.people),
      places: distinct(v.places),
    },
  };
}

/** Trimmed, non-blank, first spelling kept: "Lisbon" and "lisbon " are one place. */
function distinct(items: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const item of items) {
    const text = item.trim();
    const key = text.toLowerCase();
    if (text.length === 0 || seen.has(key)) continue;
    seen.add(key);
    out.push(text);
  }
  return out;
}

export const QUERY_REWRITE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    answer: { type: 'string', maxLength: 1000 },
    subQuestions: {
      type: 'array',
      maxItems: 3,
      items: { type: 'string', minLength: 1, maxLength: 500 },
    },
  },
  required: ['answer', 'subQuestions'],
  additionalProperties: false,
};

/** Validated, then tidied: strings trimmed, blank and repeated sub-questions dropped. */
export function parseQueryRewrite(raw: string): Parsed<QueryRewrite> {
  const parsed = parseAgainst<QueryRewrite>(raw, QUERY_REWRITE_SCHEMA);
  if (!parsed.ok) return parsed;
  return {
    ok: true,
    value: {
      answer: parsed.value.answer.trim(),
      subQuestions: distinct(parsed.value.subQuestions),
    },
  };
}
