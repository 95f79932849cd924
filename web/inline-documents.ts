import { readFileSync } from 'node:fs';
import type { Plugin } from 'vite';

/**
 * `graphql(\`query Name …\`)` as the client preset writes it, up to its closing backtick (the
 * preset allows no interpolation in a document).
 */
const CALL = /\bgraphql\(\s*`\s*(query|mutation|subscription|fragment)\s+(\w+)[^`]*`\s*\)/g;

/** A document as codegen writes it in gql/graphql.ts: one line, its AST as JSON. */
const DOCUMENT = /^export const (\w+) = (\{.*\}) as unknown as DocumentNode<.*>;$/gm;

const PREFIX = 'virtual:keepsake-document/';

/**
 * Replaces each `graphql(\`…\`)` call of a module with the document codegen generated for it
 * (`NameDocument`, or `NameFragmentDoc` for a fragment), imported by name from a module of its
 * own. Null when the module has no call.
 */
export function inlineDocuments(code: string): string | null {
  const names = new Set<string>();
  const out = code.replace(CALL, (_call, kind: string, name: string) => {
    const id = kind === 'fragment' ? `${name}FragmentDoc` : `${name}Document`;
    names.add(id);
    return id;
  });
  if (names.size === 0) return null;
  const imports = [...names].map((id) => `import { ${id} } from '${PREFIX}${id}';\n`).join('');
  return imports + out;
}

/** Each document of gql/graphql.ts by its name. */
export function generatedDocuments(source: string): Map<string, string> {
  return new Map([...source.matchAll(DOCUMENT)].map((m) => [m[1], m[2]]));
}

/**
 * The console's GraphQL documents, each a module of its own, so that each page's chunk carries
 * the documents it uses and nothing else. Through `graphql()` every page would need the map of
 * all of them, and gql/graphql.ts, one module, lands whole in a chunk every page loads. This is
 * what the client preset's Babel and SWC plugins do, for a build that runs neither.
 */
export function inlineDocumentsPlugin(generated: string): Plugin {
  const read = () => generatedDocuments(readFileSync(generated, 'utf8'));
  return {
    name: 'keepsake-inline-documents',
    enforce: 'pre',
    resolveId(id) {
      return id.startsWith(PREFIX) ? `\0${id}` : null;
    },
    load(id) {
      if (!id.startsWith(`\0${PREFIX}`)) return null;
      const name = id.slice(PREFIX.length + 1);
      const document = read().get(name);
      if (!document) this.error(`${name} is not in ${generated}: run npm run web:codegen`);
      return `export const ${name} = ${document};\n`;
    },
    transform(code, id) {
      if (!/\/web\/src\/.*\.tsx?$/.test(id) || id.includes('/web/src/gql/')) return null;
      const out = inlineDocuments(code);
      return out === null ? null : { code: out, map: null };
    },
  };
}
