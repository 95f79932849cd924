import { parse as parseConnectionString } from 'pg-connection-string';

/**
 * What a session must be for a URL's hosts to be acceptable, as libpq's target_session_attrs
 * says. `read-write` is what libpq checks with `SHOW transaction_read_only`; `primary` is a
 * server not in recovery (`pg_is_in_recovery()`), whatever its default_transaction_read_only.
 */
export type SessionAttrs = 'any' | 'read-write' | 'primary';

const ATTRS: readonly SessionAttrs[] = ['any', 'read-write', 'primary'];

/** One server of a URL: `url` names it alone, in a form `pg` (pg-connection-string) reads. */
export interface ServerAddress {
  host: string;
  port: string;
  url: string;
}

export interface ServerList {
  servers: ServerAddress[];
  attrs: SessionAttrs;
}

const URI = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/i;

/** Splits `a:1,[::1]:2,b` at the commas that are not inside an IPv6 address's brackets. */
function splitHosts(spec: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < spec.length; i++) {
    if (spec[i] === '[') depth++;
    else if (spec[i] === ']') depth--;
    else if (spec[i] === ',' && depth === 0) {
      out.push(spec.slice(start, i));
      start = i + 1;
    }
  }
  out.push(spec.slice(start));
  return out;
}

function hostAndPort(entry: string): { host: string; port: string } {
  const bracketed = /^(\[[^\]]*\])(?::(\d*))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1], port: bracketed[2] ?? '' };
  const colon = entry.lastIndexOf(':');
  return colon < 0
    ? { host: entry, port: '' }
    : { host: entry.slice(0, colon), port: entry.slice(colon + 1) };
}

/**
 * The servers a PostgreSQL URL names, in libpq's multi-host form too
 * (`postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write`, or `?host=h1,h2&port=..`),
 * each as a URL of its own that `pg` can read: node-postgres 8 reads one host only (its parser
 * rejects the form), so the choice among them is made here (server-locator.ts). Several hosts
 * without target_session_attrs are taken as read-write: libpq's default, any, would take the
 * first standby that answers and refuse every write. Throws on what libpq would refuse too.
 */
export function serverList(raw: string): ServerList {
  const m = URI.exec(raw.trim());
  if (!m) throw new Error('must be a postgres:// URL');
  const [, scheme, user = '', authority, path, query = '', fragment = ''] = m;
  const params = new URLSearchParams(query.slice(1));
  const attrsParam = params.get('target_session_attrs');
  params.delete('target_session_attrs');
  if (attrsParam !== null && !ATTRS.includes(attrsParam as SessionAttrs)) {
    throw new Error(
      `target_session_attrs=${attrsParam} is not supported here (${ATTRS.join(', ')}): the service writes`,
    );
  }
  // Hosts and ports in the query string (libpq allows either place), comma-separated too.
  const queryHosts = params.get('host');
  const queryPorts = params.get('port');
  let entries: { host: string; port: string }[];
  if (queryHosts !== null && queryHosts.includes(',')) {
    if (authority) throw new Error('names hosts both before the path and in ?host=');
    const ports = (queryPorts ?? '').split(',');
    const hosts = queryHosts.split(',');
    if (ports.length !== 1 && ports.length !== hosts.length) {
      throw new Error(`names ${hosts.length} hosts and ${ports.length} ports`);
    }
    entries = hosts.map((host, i) => ({ host, port: ports.length === 1 ? ports[0] : ports[i] }));
    params.delete('host');
    params.delete('port');
  } else {
    entries = splitHosts(authority).map(hostAndPort);
  }
  const rest = params.toString();
  const servers = entries.map(({ host, port }) => {
    const inQuery = !authority && host.startsWith('/');
    const url = inQuery
      ? `${scheme}${user}${path}?${[`host=${encodeURIComponent(host)}`, port ? `port=${port}` : '', rest].filter(Boolean).join('&')}${fragment}`
      : `${scheme}${user}${host}${port ? `:${port}` : ''}${path}${rest ? `?${rest}` : ''}${fragment}`;
    // What pg itself would refuse, refused now, with the host it is about.
    parseConnectionString(url);
    return { host, port, url };
  });
  if (servers.some((s) => !s.host && servers.length > 1)) {
    throw new Error('names an empty host among several');
  }
  const attrs = (attrsParam as SessionAttrs | null) ?? (servers.length > 1 ? 'read-write' : 'any');
  return { servers, attrs };
}

/** Where one server of a list is, for messages: never a password. */
export function describeServer(url: string): string {
  const c = parseConnectionString(url);
  const host = c.host || process.env.PGHOST || 'localhost';
  const port = c.port || process.env.PGPORT || '5432';
  const where = host.startsWith('/') ? `socket ${host}` : `${host}:${port}`;
  return `${where}/${c.database || process.env.PGDATABASE || ''}`;
}

/**
 * Several URLs in one variable (DATABASE_REPLICA_URLS): separated by commas or white space
 * before each `postgres://`, so that a URL's own commas (several hosts) stay in it.
 */
export function urlList(raw: string): string[] {
  return raw
    .trim()
    .split(/[\s,]+(?=postgres(?:ql)?:\/\/)/i)
    .map((u) => u.trim().replace(/,$/, ''))
    .filter(Boolean);
}
