import type { JsonSchema } from './json-schema-lite.js';

/**
 * The node-llama-cpp grammar for a task's JSON schema, limits included: item counts and string
 * lengths as node-llama-cpp takes them, and what it cannot take written as Keepsake's own
 * constraint: a bounded number becomes the values of a 0.05 grid between its bounds (a
 * confidence cannot be 1.8), an integer with an `enum` (a span's turn numbers) those values.
 */
export function toGrammarSchema(schema: JsonSchema): unknown {
  switch (schema.type) {
    case 'object':
      return {
        type: 'object',
        properties: Object.fromEntries(
          Object.entries(schema.properties).map(([k, v]) => [k, toGrammarSchema(v)]),
        ),
        additionalProperties: false,
      };
    case 'array':
      return {
        type: 'array',
        items: toGrammarSchema(schema.items),
        ...(schema.minItems !== undefined ? { minItems: schema.minItems } : {}),
        ...(schema.maxItems !== undefined ? { maxItems: schema.maxItems } : {}),
      };
    case 'string':
      if (schema.enum) return { enum: [...schema.enum] };
      return {
        type: 'string',
        ...(schema.minLength !== undefined ? { minLength: schema.minLength } : {}),
        ...(schema.maxLength !== undefined ? { maxLength: schema.maxLength } : {}),
      };
    case 'integer':
    case 'number': {
      if (schema.enum) return { enum: [...schema.enum] };
      const { minimum: min, maximum: max } = schema;
      if (min !== undefined && max !== undefined) {
        const step = schema.type === 'integer' ? 1 : 0.05;
        const count = Math.floor((max - min) / step + 1e-9) + 1;
        if (count <= 201) {
          return {
            enum: Array.from({ length: count }, (_, i) => Number((min + i * step).toFixed(2))),
          };
        }
      }
      return { type: schema.type };
    }
    case 'boolean':
      return { type: 'boolean' };
  }
}
