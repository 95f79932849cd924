import { writeOrCheckDoc } from '../common/files/generated-doc.js';

/**
 * The body of a command that prints a documentation file from the code: writes it, or with
 * --check says whether the committed file matches and fails when it does not.
 */
export async function runGeneratedDocCommand(
  path: string,
  markdown: string,
  command: string,
): Promise<void> {
  const outcome = await writeOrCheckDoc(path, markdown, command, process.argv.includes('--check'));
  if (outcome.ok) {
    console.log(outcome.message);
  } else {
    console.error(outcome.message);
    process.exitCode = 1;
  }
}
