import {
  ConfigOf,
  ConfigParseError,
  defineVariables,
  integer,
  oneOf,
  text,
} from '../config/config-spec.js';
import { describeServer, serverList, urlList } from './database-url.js';

/**
 * What libpq accepts, read by the parser `pg` itself uses: Unix-socket hosts (`?host=/run/...`
 * or percent-encoded), a user with an empty host, `sslmode`, `sslrootcert`; the `PG*` variables
 * fill in what the URL leaves out. WHATWG URLs refuse several of these forms. Several hosts
 * (libpq's multi-host form, with target_session_attrs) are read by database-url.ts.
 */
export const postgresUrl = (raw: string): string => {
  if (!/^postgres(ql)?:\/\//i.test(raw)) throw new ConfigParseError('must be a postgres:// URL');
  try {
    serverList(raw);
  } catch (err) {
    throw new ConfigParseError(`is not a PostgreSQL connection URL (${(err as Error).message})`);
  }
  return raw;
};

/** One or more URLs of one server each (the replicas). */
export const postgresUrls = (raw: string): string[] => {
  const urls = urlList(raw);
  if (urls.length === 0) throw new ConfigParseError('names no URL');
  return urls.map((u) => {
    postgresUrl(u);
    if (serverList(u).servers.length > 1) {
      throw new ConfigParseError(`names several hosts in one URL (${describeDatabase(u)})`);
    }
    return u;
  });
};

/** Where a connection string points, for messages: never its password. */
export function describeDatabase(url: string): string {
  try {
    return serverList(url)
      .servers.map((s) => describeServer(s.url))
      .join(', ');
  } catch {
    return 'DATABASE_URL';
  }
}

export const databaseVariables = defineVariables({
  DATABASE_URL: {
    description:
      "PostgreSQL server with the vector and pg_trgm extensions, in any form libpq accepts (postgres:// or postgresql://, Unix-socket hosts, sslmode, sslrootcert; PG* variables fill in the rest). Several hosts in libpq's multi-host form (postgres://u@h1:5432,h2:5432/keepsake?target_session_attrs=read-write) are tried in order for the one that takes writes, again after a failover, without a restart. Unset: an embedded PostgreSQL (PGlite) persisted in DATA_DIR.",
    parse: postgresUrl,
  },
  DATABASE_REPLICA_URLS: {
    description:
      'Streaming replicas (hot standbys) of DATABASE_URL, one server per URL, separated by commas or spaces. Read-only work (recall, search, the retrieval of context and sendMessage, the lists of facts, memories, stories and summaries) goes to one of them once it has replayed every write acknowledged before the read began; writes and transactions stay on the primary. Unset: every read on the primary (through its own pool, DATABASE_READ_POOL_SIZE).',
    parse: postgresUrls,
  },
  DATABASE_REPLICA_MAX_LAG_MS: {
    description:
      'How far behind the primary a replica may be, in ms: a read waits at most this long for it to replay what was acknowledged before the read began, then reads from the primary; a replica further behind at a check (or unreachable) is out of rotation until it is within this again.',
    default: '500',
    parse: integer(10, 600_000),
  },
  DATABASE_REPLICA_CHECK_MS: {
    description:
      "How often each replica's replay position, and so its lag, is read (shown in /metrics).",
    default: '1000',
    parse: integer(50, 600_000),
  },
  DATABASE_READ_POOL_SIZE: {
    description:
      "Connections per instance for the read-only work, with DATABASE_URL: to each replica, and to the primary for the reads it serves, apart from DATABASE_POOL_SIZE's, so that reads never queue behind writes' statements. One recall or context runs several reads side by side: keep it near DATABASE_POOL_SIZE (with 5, recall under 200 clients waited four times as long as with 20).",
    default: '10',
    parse: integer(1, 200),
  },
  DATABASE_LISTEN_URL: {
    description:
      "A direct connection to the primary (not through a pooler in transaction mode) for LISTEN: subscriptions' events between instances. Defaults to DATABASE_URL; several hosts are followed as there.",
    parse: postgresUrl,
  },
  DATA_DIR: {
    description: 'Directory of the embedded database, its lock file and the generated JWT secret.',
    default: './data',
    parse: text,
  },
  EMBEDDED_DATABASE_THREAD: {
    description:
      "Where the embedded database runs: worker (a thread of its own: the service keeps serving requests while a statement runs) or main (the service's own thread, where each statement stalls the event loop while it runs).",
    default: 'worker',
    parse: oneOf('worker', 'main'),
  },
  DATABASE_POOL_SIZE: {
    description: 'Connection pool size with DATABASE_URL (the embedded database always uses 1).',
    default: '10',
    parse: integer(1, 200),
  },
  DATABASE_STATEMENT_TIMEOUT_MS: {
    description:
      'statement_timeout of every connection with DATABASE_URL, in milliseconds; 0 leaves the server default.',
    default: '0',
    parse: integer(0, 86_400_000),
  },
  DATABASE_BOOT_TIMEOUT_MS: {
    description:
      'How long boot keeps retrying, with backoff, a DATABASE_URL server that cannot be reached yet (a database starting beside the service); 0 tries once.',
    default: '60000',
    parse: integer(0, 3_600_000),
  },
  DB_CONNECT_TIMEOUT_MS: {
    description: 'Timeout for opening or acquiring a database connection.',
    default: '10000',
    parse: integer(100, 600000),
  },
  DATABASE_QUEUE_TIMEOUT_MS: {
    description:
      "How long a request may wait for its turn on a connection (the embedded database's one, or DATABASE_POOL_SIZE's on a server) before it is refused with UNAVAILABLE (reason DATABASE_BUSY, retryAfterSeconds), with nothing done. GraphQL queries are served before mutations, requests in the order they came and before background work; one that has begun is never refused.",
    default: '10000',
    parse: integer(100, 600_000),
  },
  STORAGE_RESERVE_MB: {
    description:
      "Embedded database only: free space on DATA_DIR's disk, in MB, below which every write is refused (UNAVAILABLE, reason DISK_FULL) while reads go on, before PostgreSQL could run out of room mid-write. Writes resume by themselves once a quarter more is free.",
    default: '256',
    parse: integer(0, 1_048_576),
  },
  STORAGE_CHECK_MS: {
    description: 'Embedded database only: how often the free space of DATA_DIR is read, in ms.',
    default: '2000',
    parse: integer(100, 600_000),
  },
  HEALTH_DB_TIMEOUT_MS: {
    description: 'Timeout of the database check behind GET /health/ready.',
    default: '2000',
    parse: integer(50, 60000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof databaseVariables> {}
}

/** Replicas and a listening server are a server's: the embedded database has neither. */
export function validateDatabaseConfig(env: {
  DATABASE_URL?: string;
  DATABASE_REPLICA_URLS?: string[];
  DATABASE_LISTEN_URL?: string;
}): string[] {
  return [
    env.DATABASE_REPLICA_URLS && 'DATABASE_REPLICA_URLS',
    env.DATABASE_LISTEN_URL && 'DATABASE_LISTEN_URL',
  ]
    .filter((name): name is string => !!name && !env.DATABASE_URL)
    .map((name) => `${name} needs DATABASE_URL (the embedded database has no replicas)`);
}
