import { timingSafeEqual } from 'node:crypto';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether a request carries METRICS_TOKEN as `Authorization: Bearer <token>`: what opens
 * /metrics (when set) and the details of /health/ready. False when no token is configured.
 */
export function presentsMetricsToken(
  authorization: string | undefined,
  expected: string | undefined,
): boolean {
  if (!expected) return false;
  const token = /^\s*Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
  return sameSecret(token, expected);
}
