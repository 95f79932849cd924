import type { JWTPayload } from 'jose';

/**
 * JWT_ADMIN_CLAIM, the one claim that makes a platform administrator: `name` (its value must be
 * exactly true) or `name=value` (equal to value, or a list holding it). Unset, it is `admin` for
 * this service's own HS256 tokens, and nothing for a provider's: no token makes an admin.
 */
export interface AdminClaimRule {
  name: string;
  /** Undefined: the claim must be exactly true. */
  value?: string;
}

export function adminClaimRule(
  setting: string | undefined,
  symmetric: boolean,
): AdminClaimRule | null {
  const raw = setting ?? (symmetric ? 'admin' : null);
  if (!raw) return null;
  const at = raw.indexOf('=');
  return at < 0 ? { name: raw } : { name: raw.slice(0, at), value: raw.slice(at + 1) };
}

export function grantsAdmin(rule: AdminClaimRule | null, payload: JWTPayload): boolean {
  if (!rule) return false;
  const claim = payload[rule.name];
  if (rule.value === undefined) return claim === true;
  return claim === rule.value || (Array.isArray(claim) && claim.includes(rule.value));
}

/** The claim a token minted for an administrator carries. */
export function adminClaimFor(rule: AdminClaimRule): Record<string, unknown> {
  return { [rule.name]: rule.value === undefined ? true : [rule.value] };
}
