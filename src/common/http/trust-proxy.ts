import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import { ConfigParseError } from '../../config/config-spec.js';

/**
 * Which proxies' X-Forwarded-Proto and X-Forwarded-For to believe, in Express's `trust proxy`
 * terms: none (false), every one (true), the nearest N hops, or the proxies at these addresses,
 * CIDR ranges and names (loopback, linklocal, uniquelocal).
 */
export type TrustProxy = boolean | number | string[];

/** TRUST_PROXY as Express reads `trust proxy`, checked whole at boot. */
export function parseTrustProxy(raw: string): TrustProxy {
  const value = raw.trim();
  const lower = value.toLowerCase();
  if (['false', 'off', 'no', '0'].includes(lower)) return false;
  if (['true', 'on', 'yes'].includes(lower)) return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  try {
    proxyaddr.compile(entries);
  } catch (err) {
    throw new ConfigParseError(
      `must be false, true, a number of hops, or addresses, CIDR ranges and loopback/linklocal/uniquelocal separated by commas (${(err as Error).message})`,
    );
  }
  return entries;
}

type TrustFunction = (address: string, hop: number) => boolean;

const compiled = new Map<string, TrustFunction>();

/** The function Express compiles from the same value (cached: the value is the configuration's). */
export function trustFunction(trust: TrustProxy): TrustFunction {
  if (trust === true) return () => true;
  if (trust === false) return () => false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  const key = trust.join(',');
  const known = compiled.get(key);
  if (known) return known;
  const fn = proxyaddr.compile(trust);
  compiled.set(key, fn);
  return fn;
}

/** The client's address: the socket's, or the one a trusted proxy forwarded (X-Forwarded-For). */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string | undefined {
  if (trust === false || !req.socket?.remoteAddress) return req.socket?.remoteAddress;
  return proxyaddr(req, trustFunction(trust));
}
