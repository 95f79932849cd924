// PGlite's Node filesystem with the family's files kept private, whatever the process umask.
// Plain JavaScript so that the database thread (pglite.worker.mjs) and the service's own thread
// share it, from src/ under Jest and from dist/ after the build.
//
// Why a umask is not enough: Emscripten's open() creates a file with mode 0777 (which the umask
// does narrow) and then chmods it to the mode PostgreSQL asked for, narrowed by Emscripten's own
// umask (022) but not by the process's: a new cluster's files came out 0666, pg_internal.init
// 0644, whatever the process umask was. So the two places where Emscripten's NODEFS hands a
// mode to the disk (creating a node, setting its attributes) lose the group and other bits.
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/** Group and other permission bits: none of them reaches the disk. */
const NOT_OWNER = 0o077;

/**
 * Narrows every mode NODEFS writes. Throws if NODEFS is not shaped as this was written for
 * (a PGlite upgrade): the database then does not open rather than write readable files.
 */
function privateModes(nodefs) {
  const nodeOps = nodefs?.node_ops;
  const streamOps = nodefs?.stream_ops;
  if (
    typeof nodeOps?.mknod !== 'function' ||
    typeof nodeOps?.setattr !== 'function' ||
    typeof streamOps?.setattr !== 'function'
  ) {
    throw new Error(
      "PGlite's Node filesystem is not the one Keepsake knows: its files could not be kept private.",
    );
  }
  if (nodefs.keepsakePrivate) return;
  nodefs.keepsakePrivate = true;
  const narrowed = (attr) =>
    attr && typeof attr.mode === 'number' ? { ...attr, mode: attr.mode & ~NOT_OWNER } : attr;
  const { mknod, setattr } = nodeOps;
  const streamSetattr = streamOps.setattr;
  nodeOps.mknod = (parent, name, mode, dev) => mknod(parent, name, mode & ~NOT_OWNER, dev);
  nodeOps.setattr = (node, attr) => setattr(node, narrowed(attr));
  streamOps.setattr = (stream, attr) => streamSetattr(stream, narrowed(attr));
}

/** `new PrivateNodeFS(dir)` where PGlite would take `dataDir: dir`. */
export class PrivateNodeFS extends NodeFS {
  constructor(dataDir) {
    // NodeFS makes the directory itself (0777 less the umask) when it is missing.
    const root = resolve(dataDir);
    mkdirSync(root, { recursive: true, mode: 0o700 });
    const { mode } = statSync(root);
    if (mode & NOT_OWNER) chmodSync(root, mode & 0o700);
    super(root);
  }

  async init(pg, opts) {
    const { emscriptenOpts } = await super.init(pg, opts);
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [
          // Before NodeFS mounts the directory: the root node is made with the narrowed ops too.
          (mod) => privateModes(mod.FS.filesystems.NODEFS),
          ...(emscriptenOpts.preRun ?? []),
        ],
      },
    };
  }
}
