import { FragmentDefinitionNode, Kind, OperationDefinitionNode, parse } from 'graphql';
import {
  checkSource,
  MAX_FRAGMENTS,
  MAX_NESTING,
  measureOperation,
} from './query-limits.plugin.js';

function measure(document: string) {
  const doc = parse(document);
  const operation = doc.definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  )!;
  const fragments = Object.fromEntries(
    doc.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
  return measureOperation(operation, fragments, {}, 20);
}

describe('measureOperation', () => {
  it('costs a named fragment as its fields written out, at the root and deeper down', () => {
    const inline = measure(
      '{ recall(legacyId: "l", query: "q") { id } me { id displayName } a: me { id displayName } }',
    );
    const spread = measure(
      `{ ...Root me { ...Who } a: me { ...Who } }
       fragment Root on Query { recall(legacyId: "l", query: "q") { id } }
       fragment Who on User { id displayName }`,
    );
    expect(spread).toEqual(inline);
    expect(spread.expensive).toBe(1);
    expect(spread.depth).toBe(2);
  });

  it('measures fragments that each spread the next twice in linear time', () => {
    const n = 60;
    const fragments = Array.from(
      { length: n },
      (_, i) =>
        `fragment F${i} on Query { ${i + 1 < n ? `...F${i + 1} ...F${i + 1}` : '__typename'} }`,
    ).join('\n');
    const started = performance.now();
    const cost = measure(`{ ...F0 }\n${fragments}`);
    expect(performance.now() - started).toBeLessThan(500);
    expect(cost.complexity).toBe(2 ** (n - 1));
  });
});

describe('checkSource', () => {
  it(`refuses more than ${MAX_NESTING} nested brackets of any kind, and nothing within`, () => {
    const deep = (n: number) => `{ ${'... { '.repeat(n)} __typename ${'} '.repeat(n)} }`;
    expect(checkSource(deep(MAX_NESTING - 1))).toBeNull();
    expect(checkSource(deep(MAX_NESTING))?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'QUERY_TOO_COMPLEX',
    });
    expect(checkSource(`{ a(b: ${'['.repeat(300)}1${']'.repeat(300)}) }`)).not.toBeNull();
    // Brackets inside strings and comments are text, not nesting.
    expect(checkSource(`{ a(b: "${'{'.repeat(1000)}") } # ${'['.repeat(1000)}`)).toBeNull();
  });

  it(`refuses more than ${MAX_FRAGMENTS} fragment definitions`, () => {
    const doc = (n: number) =>
      `{ ...F0 }\n${Array.from({ length: n }, (_, i) => `fragment F${i} on Query { __typename }`).join('\n')}`;
    expect(checkSource(doc(MAX_FRAGMENTS))).toBeNull();
    expect(checkSource(doc(MAX_FRAGMENTS + 1))?.message).toMatch(/fragments/);
    // A field named "fragment" is not a definition.
    expect(checkSource(`{ ${'fragment '.repeat(1000)} }`)).toBeNull();
  });

  it('leaves a document that does not lex to the parser', () => {
    expect(checkSource('{ "unterminated }')).toBeNull();
  });
});
