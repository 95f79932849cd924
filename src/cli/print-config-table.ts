/**
 * npm run config:table   writes docs/configuration.md from the declarations themselves
 * (npm run docs:check runs it with --check: it fails when the committed file differs)
 */
import { writeOrCheckDoc } from '../common/files/generated-doc.js';
import { configDocument } from './config-table.js';

const outcome = await writeOrCheckDoc(
  'docs/configuration.md',
  configDocument(),
  'config:table',
  process.argv.includes('--check'),
);
if (outcome.ok) {
  console.log(outcome.message);
} else {
  console.error(outcome.message);
  process.exitCode = 1;
}
