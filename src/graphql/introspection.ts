/**
 * Schema introspection: Apollo's convention, off in production unless GRAPHQL_INTROSPECTION
 * turns it on, on elsewhere unless it turns it off. The console's types come from the committed
 * schema.gql (web/codegen.ts), never from a running server.
 */
export function introspectionEnabled(env: {
  GRAPHQL_INTROSPECTION?: boolean;
  NODE_ENV?: string;
}): boolean {
  return env.GRAPHQL_INTROSPECTION ?? env.NODE_ENV !== 'production';
}
