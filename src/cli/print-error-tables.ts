/**
 * npm run errors:table   writes docs/errors.md, the error codes and reasons, from the code itself
 * (npm run docs:check runs it with --check: it fails when the committed file differs)
 */
import { writeOrCheckDoc } from '../common/files/generated-doc.js';
import { errorsDocument } from './error-catalog.js';

const outcome = await writeOrCheckDoc(
  'docs/errors.md',
  errorsDocument(),
  'errors:table',
  process.argv.includes('--check'),
);
if (outcome.ok) {
  console.log(outcome.message);
} else {
  console.error(outcome.message);
  process.exitCode = 1;
}
