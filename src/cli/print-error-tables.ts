/**
 * npm run errors:table   writes docs/errors.md, the error codes and reasons, from the code itself
 * (npm run docs:check runs it with --check: it fails when the committed file differs)
 */
import { runGeneratedDocCommand } from './generated-doc-command.js';
import { errorsDocument } from './error-catalog.js';

await runGeneratedDocCommand('docs/errors.md', errorsDocument(), 'errors:table');
