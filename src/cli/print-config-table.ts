/**
 * npm run config:table   writes docs/configuration.md from the declarations themselves
 * (npm run docs:check runs it with --check: it fails when the committed file differs)
 */
import { configDocument } from './config-table.js';
import { runGeneratedDocCommand } from './generated-doc-command.js';

await runGeneratedDocCommand('docs/configuration.md', configDocument(), 'config:table');
