import { ApolloServerPlugin } from '@apollo/server';
import {
  DocumentNode,
  FragmentDefinitionNode,
  GraphQLError,
  Kind,
  Lexer,
  OperationDefinitionNode,
  OperationTypeNode,
  SelectionSetNode,
  Source,
  TokenKind,
  ValueNode,
} from 'graphql';
import { RequestErrorReason, requestRefusal } from './request-errors.js';

interface Cost {
  depth: number;
  complexity: number;
  /** Root fields of FIELD_COST, aliases counted one by one. */
  expensive: number;
}

export interface QueryLimits {
  maxDepth: number;
  maxComplexity: number;
  /** Most root fields of FIELD_COST one operation may hold (aliases of one field included). */
  maxExpensiveFields: number;
  /** What a connection without `first`/`last` returns. */
  defaultPage: number;
  introspection: boolean;
}

/**
 * What a root field costs beyond its selection, in the units of a field (1): an embedding of the
 * query (about 100) plus the SQL or the model call behind it, so that the complexity limit
 * follows the work a request asks for. Measured on the 2-core machine: recall and context about
 * 100 ms each, a reply or a summary a model call, an import its whole batch.
 */
export const FIELD_COST: Readonly<Record<string, number>> = {
  recall: 300,
  context: 300,
  retrievalDebug: 400,
  sendMessage: 400,
  summarizeNow: 500,
  importConversation: 500,
  addFact: 150,
  rememberThis: 150,
  addStory: 150,
  extractStory: 800,
  // Each embeds the profile's changed entries (up to 60 sentences) with consent on.
  updateProfile: 150,
  setProfileConsent: 150,
};

function pageSize(
  args: readonly { name: { value: string }; value: ValueNode }[] | undefined,
  variables: Record<string, unknown>,
  defaultPage: number,
): number {
  for (const arg of args ?? []) {
    if (arg.name.value !== 'first' && arg.name.value !== 'last') continue;
    if (arg.value.kind === Kind.INT) return Number(arg.value.value);
    if (arg.value.kind === Kind.VARIABLE) {
      const v = variables[arg.value.name.value];
      // Not an Int: coercion refuses it after this check; the default is what it would cost.
      if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2 ** 31 - 1) return v;
    }
  }
  return defaultPage;
}

/** A connection: paged by `first`/`last`, or selecting `edges`/`nodes` (its default page). */
function isConnection(field: {
  arguments?: readonly { name: { value: string } }[];
  selectionSet?: SelectionSetNode;
}): boolean {
  if (field.arguments?.some((a) => a.name.value === 'first' || a.name.value === 'last')) {
    return true;
  }
  return (
    field.selectionSet?.selections.some(
      (s) => s.kind === Kind.FIELD && (s.name.value === 'edges' || s.name.value === 'nodes'),
    ) ?? false
  );
}

/**
 * Depth and complexity of an operation. A field costs 1 (a root field of FIELD_COST its cost
 * more); fields under a connection are multiplied by its page size, the default page when the
 * request names none.
 */
export function measureOperation(
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  defaultPage: number,
): Cost {
  // A named fragment costs the same wherever it is spread (its depth shifted by where it is):
  // measured once, so fragments that each spread the next twice cost linear time, not 2^n.
  const measured = new Map<string, Cost>();
  const visit = (set: SelectionSetNode, depth: number, path: ReadonlySet<string>): Cost => {
    let maxDepth = depth;
    let complexity = 0;
    let expensive = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const weight = depth === 1 ? (FIELD_COST[sel.name.value] ?? 0) : 0;
        if (weight > 0) expensive++;
        if (!sel.selectionSet) {
          complexity += 1 + weight;
          continue;
        }
        const child = visit(sel.selectionSet, depth + 1, path);
        const multiplier = isConnection(sel)
          ? Math.max(1, pageSize(sel.arguments, variables, defaultPage))
          : 1;
        complexity += 1 + weight + child.complexity * multiplier;
        expensive += child.expensive;
        maxDepth = Math.max(maxDepth, child.depth);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const child = visit(sel.selectionSet, depth, path);
        complexity += child.complexity;
        expensive += child.expensive;
        maxDepth = Math.max(maxDepth, child.depth);
      } else {
        const name = sel.name.value;
        const fragment = fragments[name];
        // A cycle is refused by validation; here it is simply not followed.
        if (!fragment || path.has(name)) continue;
        // Root fields cost more than the same fields deeper down: two entries per fragment.
        const key = `${name}:${depth === 1 ? 'root' : 'nested'}`;
        let own = measured.get(key);
        if (!own) {
          const child = visit(fragment.selectionSet, depth, new Set([...path, name]));
          own = { ...child, depth: child.depth - depth };
          measured.set(key, own);
        }
        complexity += own.complexity;
        expensive += own.expensive;
        maxDepth = Math.max(maxDepth, depth + own.depth);
      }
    }
    return { depth: maxDepth, complexity, expensive };
  };
  return visit(operation.selectionSet, 1, new Set());
}

/** Whether the operation asks for the schema (`__schema` or `__type`), at any depth. */
function introspects(
  set: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  seen = new Set<string>(),
): boolean {
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (sel.name.value === '__schema' || sel.name.value === '__type') return true;
      if (sel.selectionSet && introspects(sel.selectionSet, fragments, seen)) return true;
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      if (introspects(sel.selectionSet, fragments, seen)) return true;
    } else if (!seen.has(sel.name.value) && fragments[sel.name.value]) {
      seen.add(sel.name.value);
      if (introspects(fragments[sel.name.value].selectionSet, fragments, seen)) return true;
    }
  }
  return false;
}

/**
 * Brackets of any kind ({ [ () one document may nest: far beyond any real operation (depth is
 * limited to GRAPHQL_MAX_DEPTH, at most 100), far below what overflows graphql-js's recursive
 * parser (about 3,000 nested inline fragments).
 */
export const MAX_NESTING = 256;
/** Fragments one document may define: validation follows a chain of them recursively. */
export const MAX_FRAGMENTS = 256;

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * Refuses, before it is parsed, a document nested deeper than MAX_NESTING or defining more than
 * MAX_FRAGMENTS fragments: it is read with graphql-js's lexer, one token at a time, which never
 * recurses (the parser and validation do, and a deep enough document overflows the stack).
 * Null when it is within the limits or does not even lex (the parser then reports that).
 */
export function checkSource(source: string): GraphQLError | null {
  const lexer = new Lexer(new Source(source));
  let depth = 0;
  let fragments = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (OPENING.has(token.kind)) {
        if (++depth > MAX_NESTING) {
          return refusal(
            `The document nests more than ${MAX_NESTING} levels of brackets.`,
            'QUERY_TOO_COMPLEX',
          );
        }
      } else if (CLOSING.has(token.kind)) {
        depth--;
      } else if (depth === 0 && token.kind === TokenKind.NAME && token.value === 'fragment') {
        if (++fragments > MAX_FRAGMENTS) {
          return refusal(
            `The document defines more than ${MAX_FRAGMENTS} fragments.`,
            'QUERY_TOO_COMPLEX',
          );
        }
      }
    }
  } catch {
    return null;
  }
  return null;
}

function refusal(message: string, reason: keyof typeof RequestErrorReason): GraphQLError {
  return requestRefusal(RequestErrorReason[reason], message);
}

/** The root fields an operation asks for, through its fragments, aliases each counted. */
function rootFields(
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
): number {
  let count = 0;
  const seen = new Set<string>();
  const stack: SelectionSetNode[] = [operation.selectionSet];
  while (stack.length > 0) {
    for (const sel of stack.pop()!.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value !== '__typename') count++;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        stack.push(sel.selectionSet);
      } else if (!seen.has(sel.name.value) && fragments[sel.name.value]) {
        seen.add(sel.name.value);
        stack.push(fragments[sel.name.value].selectionSet);
      }
    }
  }
  return count;
}

/** How deep a variable's value may nest (objects and lists): the schema's inputs need a few. */
export const MAX_VARIABLE_DEPTH = 32;

/**
 * Refuses, before anything reads them, variables nested deeper than MAX_VARIABLE_DEPTH: they are
 * walked here without recursion, while the validation of inputs (class-transformer) recurses and
 * a few thousand levels of a JSON metadata object overflowed its stack. Null when within it.
 */
export function checkVariables(variables: unknown): GraphQLError | null {
  if (variables === null || typeof variables !== 'object') return null;
  const stack: [unknown, number, string][] = Object.entries(variables).map(([name, value]) => [
    value,
    1,
    name,
  ]);
  while (stack.length > 0) {
    const [value, depth, name] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_VARIABLE_DEPTH) {
      return requestRefusal(
        RequestErrorReason.VARIABLES_TOO_DEEP,
        `The variable "${name}" nests more than ${MAX_VARIABLE_DEPTH} levels of objects and lists.`,
        name,
      );
    }
    for (const child of Object.values(value)) stack.push([child, depth + 1, name]);
  }
  return null;
}

/**
 * The limits every operation is held to, on every transport: the Apollo plugin below for HTTP,
 * graphql-ws's onSubscribe for WebSocket. Null when the operation is within them (or is not a
 * single resolvable operation, which validation then reports).
 */
export function checkOperation(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
  limits: QueryLimits,
): GraphQLError | null {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations.length === 1
      ? operations[0]
      : undefined;
  if (!operation) return null;
  const fragments = Object.fromEntries(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
  if (operation.operation === OperationTypeNode.MUTATION && rootFields(operation, fragments) > 1) {
    // Mutations run one after another and a failure may take `data` down with it: a second
    // field's error would hide that the first was done (and its id). One per request, answered.
    return refusal(
      'Send one mutation field per request: each is then done, or not, and answered on its own.',
      'ONE_MUTATION_PER_REQUEST',
    );
  }
  if (!limits.introspection && introspects(operation.selectionSet, fragments)) {
    return refusal('Introspection is turned off on this server.', 'INTROSPECTION_DISABLED');
  }
  const cost = measureOperation(operation, fragments, variables, limits.defaultPage);
  if (cost.depth > limits.maxDepth) {
    return refusal(
      `The query is ${cost.depth} levels deep; at most ${limits.maxDepth} are allowed.`,
      'QUERY_TOO_COMPLEX',
    );
  }
  if (cost.expensive > limits.maxExpensiveFields) {
    return refusal(
      `The operation asks for ${cost.expensive} searches, replies or imports at once; at most ${limits.maxExpensiveFields} are allowed.`,
      'TOO_MANY_EXPENSIVE_FIELDS',
    );
  }
  if (cost.complexity > limits.maxComplexity) {
    return refusal(
      `The query's complexity is ${cost.complexity}; at most ${limits.maxComplexity} is allowed.`,
      'QUERY_TOO_COMPLEX',
    );
  }
  return null;
}

export function queryLimitsPlugin(limits: QueryLimits): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, request, operation }) {
          // Apollo would execute a subscription as a query, its resolver without a stream.
          if (operation?.operation === OperationTypeNode.SUBSCRIPTION) {
            throw refusal(
              'Subscriptions are served over WebSocket (graphql-ws on /graphql), not over HTTP.',
              'SUBSCRIPTION_OVER_HTTP',
            );
          }
          const refused = checkOperation(
            document as DocumentNode,
            request.operationName,
            (request.variables ?? {}) as Record<string, unknown>,
            limits,
          );
          if (refused) throw refused;
        },
      };
    },
  };
}
