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
  | { type: 'number' | 'integer'; description?: string; minimum?: number; maximum?: number }
  | { type: 'boolean'; description?: string };

const LIMIT_KEYWORDS = ['minItems', 'maxItems', 'minLength', 'maxLength', 'minimum', 'maximum'];

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
 * The schema as sent to a server: without the numeric and length limits, which strict
 * structured-output implementations have not all supported (OpenAI rejected them at first,
 * llama.cpp grammars ignore some). The validator still enforces them on the answer.
 */
export function toWireSchema(schema: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (LIMIT_KEYWORDS.includes(key)) continue;
    if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, toWireSchema(v)]),
      );
    } else if (key === 'items') {
      out[key] = toWireSchema(value as JsonSchema);
    } else {
      out[key] = value;
    }
  }
  return out;
}
