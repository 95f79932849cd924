import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { UserManager } from 'oidc-client-ts';
import { graphql } from '../gql';
import { createApiClient } from '../lib/client';
import { errorMessage } from '../lib/format';
import type { SessionKind } from '../lib/session';

const WhoAmI = graphql(`
  query WhoAmI {
    me {
      id
      displayName
    }
  }
`);

interface Props {
  manager: UserManager | null;
  /** The provider's name as people know it (OIDC_PROVIDER_NAME), and its address. */
  providerName: string | null;
  issuer: string | null;
  graphqlPath: string;
  notice?: string | null;
  onSignedIn: (token: string, kind: SessionKind, idToken?: string | null) => Promise<void>;
}

export function SignInPage({
  manager,
  providerName,
  issuer,
  graphqlPath,
  notice,
  onSignedIn,
}: Props) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function checkToken(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const trimmed = token.trim().replace(/^Bearer\s+/i, '');
    // Checked against the API before it is kept: a bad token stays on this page.
    const { client, ws } = createApiClient(graphqlPath, trimmed, () => undefined);
    const result = await client.query(WhoAmI, {}, { requestPolicy: 'network-only' }).toPromise();
    void ws.dispose();
    setBusy(false);
    if (result.data?.me) await onSignedIn(trimmed, 'development');
    else setError(result.error ? errorMessage(result.error) : 'The token was not accepted.');
  }

  return (
    <main id="main" className="page narrow">
      <h1>Sign in to Keepsake</h1>
      {notice && (
        <p className="notice" role="alert">
          {notice}
        </p>
      )}
      {manager ? (
        <>
          <p>
            Your family signs in to Keepsake with <strong>{providerName}</strong>. You will enter
            your password on {providerName}’s own page
            {issuer ? <> ({new URL(issuer).host})</> : null}, never on Keepsake’s, and come straight
            back here.
          </p>
          <button type="button" className="primary" onClick={() => void manager.signinRedirect()}>
            Sign in with {providerName}
          </button>
        </>
      ) : (
        <form onSubmit={(e) => void checkToken(e)} className="card">
          <h2>Development sign-in</h2>
          <p>
            No identity provider is configured (<code>OIDC_ISSUER</code>). Paste a token minted with{' '}
            <code>npm run token -- --sub you --email you@example.com --name You</code>.
          </p>
          <label htmlFor="dev-token">Token</label>
          <textarea
            id="dev-token"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            rows={4}
            required
            spellCheck={false}
            autoComplete="off"
          />
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Checking…' : 'Sign in with this token'}
          </button>
        </form>
      )}
    </main>
  );
}

/** The provider redirects here with the authorization code; oidc-client-ts trades it (PKCE). */
export function SignedInPage({ manager, onSignedIn }: Pick<Props, 'manager' | 'onSignedIn'>) {
  const [error, setError] = useState<string | null>(null);
  const started = useRef(false);
  useEffect(() => {
    if (!manager || started.current) return;
    started.current = true;
    manager.signinRedirectCallback().then(
      (user) => onSignedIn(user.access_token, 'oidc', user.id_token ?? null),
      (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
    );
  }, [manager, onSignedIn]);
  return (
    <main id="main" className="page narrow">
      <h1>Signing in…</h1>
      {!manager && <p role="alert">No identity provider is configured.</p>}
      {error && (
        <p className="error" role="alert">
          Sign-in failed: {error} <a href={`${import.meta.env.BASE_URL}sign-in`}>Try again</a>
        </p>
      )}
    </main>
  );
}

/** Where the provider sends the browser back once it has ended its own session too. */
export function SignedOutPage({ providerName }: { providerName: string | null }) {
  return (
    <main id="main" className="page narrow">
      <h1>You are signed out</h1>
      <p>
        {providerName
          ? `You are signed out of Keepsake and of ${providerName}: the next person at this computer has to sign in with their own password.`
          : 'You are signed out of Keepsake.'}
      </p>
      <p>
        <a className="button primary" href={`${import.meta.env.BASE_URL}sign-in`}>
          Sign in again
        </a>
      </p>
    </main>
  );
}
