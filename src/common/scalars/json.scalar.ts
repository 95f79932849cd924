import { GraphQLScalarType, Kind, ValueNode } from 'graphql';

function literalToValue(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return node.values.map(literalToValue);
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literalToValue(f.value)]));
    default:
      throw new TypeError('JSON literals cannot contain variables.');
  }
}

/** A JSON object (message metadata, structured summaries). */
export const JSONObjectScalar = new GraphQLScalarType({
  name: 'JSONObject',
  description: 'A JSON object.',
  serialize: (value) => value,
  parseValue: (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new TypeError('JSONObject must be an object.');
    }
    return value;
  },
  parseLiteral: (node) => {
    if (node.kind !== Kind.OBJECT) throw new TypeError('JSONObject must be an object.');
    return literalToValue(node);
  },
});
