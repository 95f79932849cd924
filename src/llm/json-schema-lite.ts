/**
 * The small subset of JSON Schema the task outputs use, with a validator. Written by hand to
 * avoid a dependency; it rejects schemas it does not understand rather than ignoring keywords.
 */
export type JsonSchema =
  | {
      type: 'object';
      description?: string;
      properties: Record<string, JsonSchema>;
      required: string[];
      additionalProperties: false;
    }
  | {
      type: 'array';
      description?: string;
      items: JsonSchema;
      minItems?: number;
      maxItems?: number;
    }
  | {
      type: 'string';
      description?: string;
      enum?: readonly string[];
      minLength?: number;
      maxLength?: number;
    }
  | {
      type: 'number' | 'integer';
      description?: string;
      minimum?: number;
      maximum?: number;
      /** The only values allowed (a span's turn numbers). */
      enum?: readonly number[];
    }
  | { type: 'boolean'; description?: string };

/** Every problem found, as `path: problem`; empty when the value conforms. */
export function validateJson(schema: JsonSchema, value: unknown, path = '$'): string[] {
  switch (schema.type) {
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return [`${path}: expected an object`];
      }
      const record = value as Record<string, unknown>;
      const problems: string[] = [];
      for (const key of schema.required) {
        if (!(key in record)) problems.push(`${path}.${key}: missing`);
      }
      for (const [key, child] of Object.entries(record)) {
        const childSchema = schema.properties[key];
        if (!childSchema) problems.push(`${path}.${key}: unexpected property`);
        else problems.push(...validateJson(childSchema, child, `${path}.${key}`));
      }
      return problems;
    }
    case 'array': {
      if (!Array.isArray(value)) return [`${path}: expected an array`];
      const problems: string[] = [];
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        problems.push(`${path}: expected at least ${schema.minItems} items`);
      }
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        problems.push(`${path}: expected at most ${schema.maxItems} items`);
      }
      value.forEach((item, i) =>
        problems.push(...validateJson(schema.items, item, `${path}[${i}]`)),
      );
      return problems;
    }
    case 'string': {
      if (typeof value !== 'string') return [`${path}: expected a string`];
      if (schema.enum && !schema.enum.includes(value)) {
        return [`${path}: expected one of ${schema.enum.join(', ')}`];
      }
      if (schema.minLength !== undefined && value.trim().length < schema.minLength) {
        return [`${path}: expected at least ${schema.minLength} characters`];
      }
      if (schema.maxLength !== undefined && value.length > schema.maxLength) {
        return [`${path}: expected at most ${schema.maxLength} characters`];
      }
      return [];
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value))
        return [`${path}: expected a number`];
      if (schema.type === 'integer' && !Number.isInteger(value)) {
        return [`${path}: expected an integer`];
      }
      if (schema.enum && !schema.enum.includes(value)) {
        return [`${path}: expected one of ${schema.enum.join(', ')}`];
      }
      if (schema.minimum !== undefined && value < schema.minimum) {
        return [`${path}: expected >= ${schema.minimum}`];
      }
      if (schema.maximum !== undefined && value > schema.maximum) {
        return [`${path}: expected <= ${schema.maximum}`];
      }
      return [];
    }
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${path}: expected a boolean`];
  }
}

/**
 * The schema as sent to a server, whole: every limit the validator enforces (item counts,
 * lengths, numeric ranges) goes with it, so a server that turns the schema into a grammar
 * (llama.cpp, vLLM) stops a confidence of 1.8 or a list that repeats past its cap while it is
 * generated rather than after. A server that refuses the schema is switched to json_object
 * mode (OpenAiLanguageModel), where the validator alone enforces them.
 */
export function toWireSchema(schema: JsonSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

const LIMIT_KEYWORDS = ['minItems', 'maxItems', 'minLength', 'maxLength', 'minimum', 'maximum'];

/**
 * The schema without its numeric and length limits, for a server whose structured output
 * refuses them (OpenAI's strict mode once did): the validator still enforces them.
 */
export function withoutLimits(schema: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (LIMIT_KEYWORDS.includes(key)) continue;
    if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, withoutLimits(v)]),
      );
    } else if (key === 'items') {
      out[key] = withoutLimits(value as JsonSchema);
    } else {
      out[key] = value;
    }
  }
  return out;
}
