/** npm run errors:table: the README's tables of error codes and reasons, from the code itself. */
import { errorTables } from './error-catalog.js';

console.log(errorTables());
