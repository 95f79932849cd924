import { NodeFS } from '@electric-sql/pglite/nodefs';

/** PGlite's Node filesystem that writes no group or other permission bits (private-node-fs.mjs). */
export declare class PrivateNodeFS extends NodeFS {}
