import {
  lazy,
  Suspense,
  useCallback,
  useEffect,
  useMemo,
  useState,
  type ComponentType,
} from 'react';
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
import { SignInPage, SignedInPage } from './pages/sign-in';

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
    clearSession();
    return { session: null, notice: 'Your session has expired: sign in again.' };
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
  const manager = useMemo(
    () => (settings.oidc && userManager ? userManager(settings.oidc) : null),
    [settings, userManager],
  );

  const signIn = useCallback((token: string, kind: SessionKind) => {
    setState({ session: saveSession(token, kind), notice: null });
  }, []);
  const signOut = useCallback(
    (reason: string | null) => {
      clearSession();
      void manager?.removeUser();
      setState({ session: null, notice: reason });
    },
    [manager],
  );

  // The provider renews its token in the background: the console follows.
  useEffect(() => {
    if (!manager) return;
    const loaded = (user: { access_token: string }) => signIn(user.access_token, 'oidc');
    manager.events.addUserLoaded(loaded);
    return () => manager.events.removeUserLoaded(loaded);
  }, [manager, signIn]);

  // An expired token would be refused anyway: back to sign-in when it expires, not at the next
  // request. (An OIDC session is renewed before then, which replaces the session and this timer.)
  useEffect(() => {
    if (!session?.expiresAt) return;
    const ms = Math.min(session.expiresAt * 1000 - Date.now(), 2 ** 31 - 1);
    const timer = setTimeout(() => signOut('Your session has expired: sign in again.'), ms);
    return () => clearTimeout(timer);
  }, [session, signOut]);

  const api = useMemo(
    () =>
      session
        ? {
            ...createApiClient(settings.graphqlPath, session.token, () =>
              signOut('The service did not accept your sign-in (expired or invalid token).'),
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
            <Shell session={session} onSignOut={() => signOut(null)}>
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
          <Route path="/sign-in">
            <SignInPage
              manager={manager}
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

function Shell({
  session,
  onSignOut,
  children,
}: {
  session: Session;
  onSignOut: () => void;
  children: React.ReactNode;
}) {
  const [location] = useLocation();
  const [{ data }] = useQuery({ query: ShellMe });
  const current = (path: string) =>
    (path === '/' ? location === '/' || location.startsWith('/legacies') : location === path)
      ? 'page'
      : undefined;
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
        <button type="button" className="link-button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {children}
    </>
  );
}
