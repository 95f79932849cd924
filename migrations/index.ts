import { Foundation1763800000000 } from './1763800000000-Foundation.js';
import { Jobs1763800100000 } from './1763800100000-Jobs.js';

/**
 * Every migration, in order. Listed explicitly because TypeORM's file globs do not load under
 * ES modules in Jest; `npm run migration:generate` prints the line to add here.
 */
export const MIGRATIONS = [Foundation1763800000000, Jobs1763800100000];
