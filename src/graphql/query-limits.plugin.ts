import { ApolloServerPlugin } from '@apollo/server';
import {
  DocumentNode,
  FragmentDefinitionNode,
  GraphQLError,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
  ValueNode,
} from 'graphql';
import { PublicErrorCode } from '../common/errors/domain.exception.js';

interface Cost {
  depth: number;
  complexity: number;
}

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
      // Not an Int: coercion refuses it after this plugin; the default is what it would cost.
      if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2 ** 31 - 1) return v;
    }
  }
  return defaultPage;
}

/**
 * Depth and complexity of an operation. A field costs 1; fields under a connection (a field
 * with `first`/`last`, or `edges`/`nodes`) are multiplied by its page size.
 */
export function measureOperation(
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  defaultPage: number,
): Cost {
  const visit = (set: SelectionSetNode, depth: number, seen: Set<string>): Cost => {
    let maxDepth = depth;
    let complexity = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (!sel.selectionSet) {
          complexity += 1;
          continue;
        }
        const child = visit(sel.selectionSet, depth + 1, seen);
        const paged = sel.arguments?.some(
          (a) => a.name.value === 'first' || a.name.value === 'last',
        );
        const multiplier = paged ? Math.max(1, pageSize(sel.arguments, variables, defaultPage)) : 1;
        complexity += 1 + child.complexity * multiplier;
        maxDepth = Math.max(maxDepth, child.depth);
      } else {
        const fragment = sel.kind === Kind.INLINE_FRAGMENT ? sel : fragments[sel.name.value];
        if (!fragment) continue;
        const key = sel.kind === Kind.FRAGMENT_SPREAD ? sel.name.value : '';
        if (key && seen.has(key)) continue;
        const child = visit(fragment.selectionSet, depth, key ? new Set([...seen, key]) : seen);
        complexity += child.complexity;
        maxDepth = Math.max(maxDepth, child.depth);
      }
    }
    return { depth: maxDepth, complexity };
  };
  return visit(operation.selectionSet, 1, new Set());
}

export function queryLimitsPlugin(limits: {
  maxDepth: number;
  maxComplexity: number;
  defaultPage: number;
}): ApolloServerPlugin {
  const reject = (message: string) =>
    new GraphQLError(message, {
      // A client's mistake: 400, not the 500 Apollo gives an error thrown from a plugin.
      extensions: {
        code: PublicErrorCode.BAD_USER_INPUT,
        reason: 'QUERY_TOO_COMPLEX',
        http: { status: 400 },
      },
    });
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operation, request }) {
          if (!operation) return;
          const fragments = Object.fromEntries(
            (document as DocumentNode).definitions
              .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
              .map((d) => [d.name.value, d]),
          );
          const cost = measureOperation(
            operation,
            fragments,
            (request.variables ?? {}) as Record<string, unknown>,
            limits.defaultPage,
          );
          if (cost.depth > limits.maxDepth) {
            throw reject(
              `The query is ${cost.depth} levels deep; at most ${limits.maxDepth} are allowed.`,
            );
          }
          if (cost.complexity > limits.maxComplexity) {
            throw reject(
              `The query's complexity is ${cost.complexity}; at most ${limits.maxComplexity} is allowed.`,
            );
          }
        },
      };
    },
  };
}
