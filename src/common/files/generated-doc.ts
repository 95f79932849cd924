import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

export interface GeneratedDocOutcome {
  ok: boolean;
  message: string;
}

/**
 * A documentation file printed from the code (docs/configuration.md, docs/errors.md), as
 * schema.gql is: written as Prettier formats it, so that the lint passes and `check` compares
 * the committed bytes with what the code prints now. Prettier is a development tool, loaded only
 * here, by the commands that print these files.
 */
export async function writeOrCheckDoc(
  path: string,
  markdown: string,
  command: string,
  check: boolean,
): Promise<GeneratedDocOutcome> {
  const file = resolve(path);
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(file)) ?? {};
  const text = await prettier.format(markdown, { ...options, filepath: file });
  if (!check) {
    writeFileSync(file, text);
    return { ok: true, message: `wrote ${path}` };
  }
  let committed: string | null = null;
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    // Missing: said below.
  }
  if (committed === text) return { ok: true, message: `${path} matches the code.` };
  return {
    ok: false,
    message:
      committed === null
        ? `${path} is missing: run \`npm run ${command}\` and commit it.`
        : `${path} is out of date (the code prints something else): run \`npm run ${command}\` and commit it.`,
  };
}
