import { INestApplicationContext } from '@nestjs/common';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { lexicographicSortSchema, printSchema } from 'graphql';

export const SCHEMA_HEADER =
  '# Generated from the code-first schema by `npm run schema:print`. Do not edit by hand.\n\n';

/** The schema as committed in schema.gql: sorted, so that it only changes when the API does. */
export function renderSchema(app: INestApplicationContext): string {
  const { schema } = app.get(GraphQLSchemaHost);
  return `${SCHEMA_HEADER}${printSchema(lexicographicSortSchema(schema))}\n`;
}
