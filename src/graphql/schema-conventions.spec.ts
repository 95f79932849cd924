import { readFileSync } from 'node:fs';
import { buildSchema, isInputObjectType, isInterfaceType, isObjectType } from 'graphql';

/**
 * Rules the committed schema (schema.gql, printed from the code and drift-checked in CI) keeps
 * across every type, so that clients can rely on them wherever a field appears.
 */
describe('the schema', () => {
  const schema = buildSchema(readFileSync('schema.gql', 'utf8'));
  const fields = Object.values(schema.getTypeMap())
    .filter((t) => !t.name.startsWith('__'))
    .flatMap((type) =>
      isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)
        ? Object.values(type.getFields()).map((field) => ({ type: type.name, field }))
        : [],
    );

  it('types every sourceType as the SourceType enum, never as a string', () => {
    const sourceTypes = fields.filter(({ field }) => field.name === 'sourceType');
    expect(sourceTypes.length).toBeGreaterThan(5);
    expect(
      sourceTypes
        .filter(({ field }) => String(field.type).replace(/[![\]]/g, '') !== 'SourceType')
        .map(({ type, field }) => `${type}.sourceType: ${String(field.type)}`),
    ).toEqual([]);
    expect(
      String(
        (
          schema.getType('SourceShare') as { getFields(): Record<string, { type: unknown }> }
        ).getFields().sourceType.type,
      ),
    ).toBe('SourceType!');
  });
});
