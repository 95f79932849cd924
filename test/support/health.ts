/**
 * /health/ready says only whether the service is ready, unless asked with METRICS_TOKEN: tests
 * that read what lies behind it start the service with this token and ask with it.
 */
export const HEALTH_TOKEN = 'health-details-token-0123';

/** GET /health/ready with the token: its status and detailed body. */
export async function readyDetails<T = Record<string, unknown>>(
  /** Any URL of the service (its /graphql, its base). */
  url: string,
): Promise<{ status: number; body: T }> {
  const res = await fetch(new URL('/health/ready', url), {
    headers: { authorization: `Bearer ${HEALTH_TOKEN}` },
  });
  return { status: res.status, body: (await res.json()) as T };
}
