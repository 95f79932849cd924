import {
  lazy,
  Suspense,
  useCallback,
  useEffect,
  useMemo,
  useState,
  type ComponentType,
} from 'react';
import type { User } from 'oidc-client-ts';
import { Provider, useQuery } from 'urql';
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter';
import { graphql } from './gql';
import { createApiClient } from './lib/client';
import { RestContext, restApi } from './lib/rest';
import {
  clearSession,
  isExpired,
  readSession,
  saveSession,
  type Session,
  type SessionKind,
} from './lib/session';
import type { ConsoleSettings } from './lib/settings';
import { SignInPage, SignedInPage, SignedOutPage } from './pages/sign-in';

/** A page loaded when first shown: each route's code (and what only it uses) is a chunk of its own. */
function page<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) {
  return lazy(() => load().then((module) => ({ default: module[name] })));
}

const HomePage = page(() => import('./pages/home'), 'HomePage');
const LegacyPage = page(() => import('./pages/legacy'), 'LegacyPage');
const FactsPage = page(() => import('./pages/facts'), 'FactsPage');
const FactPage = page(() => import('./pages/fact'), 'FactPage');
const ConversationsPage = page(() => import('./pages/conversations'), 'ConversationsPage');
const ConversationPage = page(() => import('./pages/conversation'), 'ConversationPage');
const RecallPage = page(() => import('./pages/recall'), 'RecallPage');
const MemoriesPage = page(() => import('./pages/memories'), 'MemoriesPage');
const ProfilePage = page(() => import('./pages/profile'), 'ProfilePage');
const StoriesPage = page(() => import('./pages/stories'), 'StoriesPage');
const StoryPage = page(() => import('./pages/story'), 'StoryPage');
const LookingBackPage = page(() => import('./pages/looking-back'), 'LookingBackPage');
const OperatorsPage = page(() => import('./pages/operators'), 'OperatorsPage');

const ShellMe = graphql(`
  query ShellMe {
    me {
      id
      isPlatformAdmin
    }
  }
`);

function initialSession(): { session: Session | null; notice: string | null } {
  const session = readSession();
  if (session && isExpired(session)) {
    void clearSession();
    return { session: null, notice: 'Your sign-in has ended: sign in again.' };
  }
  return { session, notice: null };
}

export function App({
  settings,
  userManager,
}: {
  settings: ConsoleSettings;
  /** lib/oidc's, loaded (with oidc-client-ts) only when a provider is configured. */
  userManager: typeof import('./lib/oidc').userManager | null;
}) {
  const [{ session, notice }, setState] = useState(initialSession);
  /** Whether this page can renew the sign-in (it holds the provider's refresh token). */
  const [renewable, setRenewable] = useState(false);
  const manager = useMemo(
    () => (settings.oidc && userManager ? userManager(settings.oidc) : null),
    [settings, userManager],
  );
  const providerName = settings.oidc?.providerName ?? null;

  const signIn = useCallback(async (token: string, kind: SessionKind, idToken?: string | null) => {
    const saved = await saveSession(token, kind, idToken ?? null);
    setState({ session: saved, notice: null });
  }, []);
  const signOut = useCallback(
    async (reason: string | null, everywhere = false) => {
      void manager?.removeUser();
      setRenewable(false);
      const endSession = await clearSession(everywhere);
      if (endSession) {
        // The provider ends its own session too, then sends the browser to /app/signed-out.
        location.assign(endSession);
        return;
      }
      setState({
        session: null,
        notice:
          everywhere && providerName
            ? `You are signed out of Keepsake. ${providerName} does not let Keepsake end your sign-in there: on a shared computer, sign out on ${providerName}'s own page too.`
            : reason,
      });
    },
    [manager, providerName],
  );

  // Renewal without a hidden iframe: with the provider's refresh token (in this page's memory),
  // a new access token is asked for before this one expires; without one, the sign-in simply
  // ends when the token does, and the console says when (Shell).
  useEffect(() => {
    if (!manager) return;
    const loaded = (user: User) => {
      setRenewable(!!user.refresh_token);
      void signIn(user.access_token, 'oidc', user.id_token ?? null);
    };
    const expiring = () => {
      void manager.getUser().then((user) => {
        if (user?.refresh_token) {
          manager.signinSilent().catch(() => setRenewable(false));
        }
      });
    };
    manager.events.addUserLoaded(loaded);
    manager.events.addAccessTokenExpiring(expiring);
    return () => {
      manager.events.removeUserLoaded(loaded);
      manager.events.removeAccessTokenExpiring(expiring);
    };
  }, [manager, signIn]);

  // An expired token would be refused anyway: back to sign-in when it expires, not at the next
  // request. (A renewed OIDC session replaces the session and this timer.)
  useEffect(() => {
    if (!session?.expiresAt) return;
    const ms = Math.min(session.expiresAt * 1000 - Date.now(), 2 ** 31 - 1);
    const timer = setTimeout(() => void signOut('Your sign-in has ended: sign in again.'), ms);
    return () => clearTimeout(timer);
  }, [session, signOut]);

  const api = useMemo(
    () =>
      session
        ? {
            ...createApiClient(
              settings.graphqlPath,
              session.token,
              () => void signOut('The service did not accept your sign-in: sign in again.'),
            ),
            rest: restApi(settings.graphqlPath, session.token),
          }
        : null,
    [session, settings.graphqlPath, signOut],
  );
  useEffect(() => () => void api?.ws.dispose(), [api]);

  return (
    <Router base={import.meta.env.BASE_URL.replace(/\/$/, '')}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      {api && session ? (
        <Provider value={api.client}>
          <RestContext.Provider value={api.rest}>
            <Shell
              session={session}
              providerName={providerName}
              renewable={renewable}
              onSignOut={(everywhere) => void signOut(null, everywhere)}
              onSignInAgain={() => void manager?.signinRedirect()}
            >
              <Suspense
                fallback={
                  <main id="main" className="page">
                    <p role="status">Loading…</p>
                  </main>
                }
              >
                <Switch>
                  <Route path="/" component={HomePage} />
                  <Route path="/legacies/:legacyId" component={LegacyPage} />
                  <Route path="/legacies/:legacyId/facts" component={FactsPage} />
                  <Route path="/legacies/:legacyId/facts/:factId" component={FactPage} />
                  <Route path="/legacies/:legacyId/conversations" component={ConversationsPage} />
                  <Route
                    path="/legacies/:legacyId/conversations/:conversationId"
                    component={ConversationPage}
                  />
                  <Route path="/legacies/:legacyId/recall" component={RecallPage} />
                  <Route path="/legacies/:legacyId/stories" component={StoriesPage} />
                  <Route path="/legacies/:legacyId/stories/:storyId" component={StoryPage} />
                  <Route path="/legacies/:legacyId/looking-back" component={LookingBackPage} />
                  <Route path="/memories" component={MemoriesPage} />
                  <Route path="/profile" component={ProfilePage} />
                  <Route path="/operators" component={OperatorsPage} />
                  <Route path="/sign-in">
                    <Redirect to="/" replace />
                  </Route>
                  <Route path="/signed-in">
                    <Redirect to="/" replace />
                  </Route>
                  <Route path="/signed-out">
                    <Redirect to="/" replace />
                  </Route>
                  <Route>
                    <main id="main" className="page">
                      <h1>Page not found</h1>
                      <p>
                        <Link href="/">Back to your legacies</Link>
                      </p>
                    </main>
                  </Route>
                </Switch>
              </Suspense>
            </Shell>
          </RestContext.Provider>
        </Provider>
      ) : (
        <Switch>
          <Route path="/signed-in">
            <SignedInPage manager={manager} onSignedIn={signIn} />
          </Route>
          <Route path="/signed-out">
            <SignedOutPage providerName={providerName} />
          </Route>
          <Route path="/sign-in">
            <SignInPage
              manager={manager}
              providerName={providerName}
              issuer={settings.oidc?.issuer ?? null}
              graphqlPath={settings.graphqlPath}
              notice={notice}
              onSignedIn={signIn}
            />
          </Route>
          <Route>
            <Redirect to="/sign-in" replace />
          </Route>
        </Switch>
      )}
    </Router>
  );
}

/** "14:05", or "14:05 on 3 March" when not today. */
function endsAt(seconds: number): string {
  const at = new Date(seconds * 1000);
  const time = at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return at.toDateString() === new Date().toDateString()
    ? time
    : `${time} on ${at.toLocaleDateString([], { day: 'numeric', month: 'long' })}`;
}

function Shell({
  session,
  providerName,
  renewable,
  onSignOut,
  onSignInAgain,
  children,
}: {
  session: Session;
  providerName: string | null;
  renewable: boolean;
  onSignOut: (everywhere: boolean) => void;
  onSignInAgain: () => void;
  children: React.ReactNode;
}) {
  const [location] = useLocation();
  const [{ data }] = useQuery({ query: ShellMe });
  const [choosing, setChoosing] = useState(false);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  const current = (path: string) =>
    (path === '/' ? location === '/' || location.startsWith('/legacies') : location === path)
      ? 'page'
      : undefined;
  // A sign-in this page cannot renew ends with its token: said plainly, ten minutes ahead.
  const ending =
    session.kind === 'oidc' &&
    !renewable &&
    session.expiresAt !== null &&
    session.expiresAt * 1000 - now < 10 * 60_000;
  return (
    <>
      <header className="top">
        <p className="brand">Keepsake</p>
        <nav aria-label="Main">
          <Link href="/" aria-current={current('/')}>
            Legacies
          </Link>
          <Link href="/memories" aria-current={current('/memories')}>
            Memories
          </Link>
          <Link href="/profile" aria-current={current('/profile')}>
            Profile
          </Link>
          {data?.me.isPlatformAdmin && (
            <Link href="/operators" aria-current={current('/operators')}>
              For operators
            </Link>
          )}
        </nav>
        {session.kind === 'development' && (
          <p className="dev-badge" title="Signed in with a pasted development token">
            Development sign-in
          </p>
        )}
        <button
          type="button"
          className="link-button"
          aria-expanded={providerName ? choosing : undefined}
          onClick={() => (providerName ? setChoosing(!choosing) : onSignOut(false))}
        >
          Sign out
        </button>
      </header>
      {choosing && providerName && (
        <section className="card sign-out" aria-labelledby="sign-out-heading">
          <h2 id="sign-out-heading">Sign out</h2>
          <p>
            On a shared computer, sign out of {providerName} too: otherwise the next person who
            signs in here goes straight into your account.
          </p>
          <p className="actions">
            <button type="button" className="primary" onClick={() => onSignOut(true)}>
              Sign out of Keepsake and {providerName}
            </button>
            <button type="button" onClick={() => onSignOut(false)}>
              Sign out of Keepsake only
            </button>
            <button type="button" className="link-button" onClick={() => setChoosing(false)}>
              Cancel
            </button>
          </p>
        </section>
      )}
      {ending && session.expiresAt !== null && (
        <p className="notice" role="status">
          Your sign-in ends at {endsAt(session.expiresAt)}.{' '}
          <button type="button" className="link-button" onClick={onSignInAgain}>
            Sign in again now
          </button>{' '}
          to keep going without interruption.
        </p>
      )}
      {children}
    </>
  );
}
