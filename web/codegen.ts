import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed operations from the committed schema.gql. The output (web/src/gql) is generated, not
 * committed: `npm run typecheck` and `npm run build` regenerate it first, so a schema change that
 * breaks an operation of the console fails both.
 */
const config: CodegenConfig = {
  schema: 'schema.gql',
  documents: ['web/src/**/*.{ts,tsx}', '!web/src/gql/**'],
  ignoreNoDocuments: false,
  generates: {
    'web/src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: { DateTime: 'string', JSONObject: 'Record<string, unknown>' },
      },
    },
  },
};

export default config;
