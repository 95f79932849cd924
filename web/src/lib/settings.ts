/** The service's public settings for the console (GET /app/config.json). */
export interface ConsoleSettings {
  graphqlPath: string;
  oidc: { issuer: string; clientId: string; scopes: string; providerName: string } | null;
}

export async function loadSettings(): Promise<ConsoleSettings> {
  const res = await fetch(`${import.meta.env.BASE_URL}config.json`, { cache: 'no-store' });
  if (!res.ok) throw new Error(`The console settings could not be read (${res.status}).`);
  return (await res.json()) as ConsoleSettings;
}
