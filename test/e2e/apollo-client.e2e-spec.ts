import { readFileSync } from 'node:fs';
import {
  ApolloClient,
  ApolloLink,
  gql,
  HttpLink,
  InMemoryCache,
  type DocumentNode,
  type OperationVariables,
} from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import { createClient } from 'graphql-ws';
import { Kind, OperationTypeNode } from 'graphql';
import { filter, firstValueFrom } from 'rxjs';
import WebSocket from 'ws';
import { JobsService } from '../../src/jobs/jobs.service.js';
import { startTestApp, TestApp, TestUser } from '../support/test-app.js';

/**
 * A client nobody here wrote: Apollo Client 4 with its normalized InMemoryCache, over HTTP and
 * graphql-ws, as a frontend developer would set it up from the API guide (docs/api.md). It walks
 * the README's walk-through with the README's own documents, pages with fetchMore through
 * Apollo's relayStylePagination, and checks that two recalls and two contexts keep their own
 * scores in one cache.
 */

interface Step {
  query: string;
  variables: Record<string, string>;
}

/** The walk-through's `gql '…'` calls, in order, with their shell splices as placeholders. */
function walkThrough(): { steps: Step[]; subscription: string; contextAnswer: unknown } {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('## A five-minute walk-through');
  expect(start).toBeGreaterThanOrEqual(0);
  // To the next section, whichever it is.
  const section = readme.slice(start, readme.indexOf('\n## ', start));
  const steps = [...section.matchAll(/^gql '(.*)'$/gm)].map((m) => {
    // '"'$LEGACY'"' in the shell is the variable's value between the JSON's quotes.
    const json = m[1].replace(/'\$(\w+)'/g, '<$1>');
    return JSON.parse(json) as Step;
  });
  const subscription = /query: '(subscription [^']+)'/.exec(section)![1].replace(/\\"/g, '"');
  const contextAnswer = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]) as unknown;
  return { steps, subscription, contextAnswer };
}

function apolloClient(url: string, wsUrl: string, token: string) {
  const http = new HttpLink({ uri: url, headers: { authorization: `Bearer ${token}` } });
  const ws = new GraphQLWsLink(
    createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
    }),
  );
  const link = ApolloLink.split(
    ({ query }) => {
      const main = getMainDefinition(query);
      return (
        main.kind === Kind.OPERATION_DEFINITION && main.operation === OperationTypeNode.SUBSCRIPTION
      );
    },
    ws,
    http,
  );
  const cache = new InMemoryCache({
    typePolicies: {
      Query: {
        fields: {
          // What docs/api.md tells a frontend developer to write: Relay-style helpers, keyed by
          // the arguments that are not paging ones.
          facts: relayStylePagination(['legacyId', 'filter']),
          recall: relayStylePagination(['legacyId', 'query']),
        },
      },
    },
  });
  return { client: new ApolloClient({ link, cache }), ws };
}

describe('Apollo Client 4 with its normalized cache and graphql-ws', () => {
  let t: TestApp;
  let alice: TestUser;
  let apollo: ReturnType<typeof apolloClient>;
  const ids: Record<string, string> = {};

  const run = async <T = Record<string, unknown>>(step: Step): Promise<T> => {
    const document = gql(step.query);
    const variables = Object.fromEntries(
      Object.entries(step.variables ?? {}).map(([k, v]) => [
        k,
        v.replace(/^<(\w+)>$/, (_, name: string) => ids[name]),
      ]),
    );
    const main = getMainDefinition(document);
    const result =
      main.kind === Kind.OPERATION_DEFINITION && main.operation === OperationTypeNode.MUTATION
        ? await apollo.client.mutate({ mutation: document, variables })
        : await apollo.client.query({ query: document, variables, fetchPolicy: 'network-only' });
    expect(result.error).toBeUndefined();
    return result.data as T;
  };

  beforeAll(async () => {
    t = await startTestApp({ JOBS_WORKER: 'false', JOBS_SCHEDULER: 'false' });
    alice = await t.user('apollo-alice', { email: 'alice@example.com', name: 'Alice' });
    apollo = apolloClient(t.url, t.wsUrl, alice.token);
  });
  afterAll(async () => {
    apollo?.client.stop();
    await (apollo?.ws as unknown as { client: { dispose(): Promise<void> } })?.client.dispose();
    await t?.close();
  });

  it("walks the README's walk-through with its own documents, the subscription included", async () => {
    const { steps, subscription, contextAnswer } = walkThrough();
    expect(steps).toHaveLength(7);
    const [createLegacy, startConversation, sendMessage, addFact, rememberThis, recall, context] =
      steps;

    const legacy = await run<{ createLegacy: { id: string; viewerRole: string } }>(createLegacy);
    expect(legacy.createLegacy.viewerRole).toBe('OWNER');
    ids.LEGACY = legacy.createLegacy.id;
    ids.CONV = (
      await run<{ startConversation: { id: string } }>(startConversation)
    ).startConversation.id;

    // Step 4: the README's subscription, through Apollo's graphql-ws link.
    const events: unknown[] = [];
    const watching = apollo.client
      .subscribe({ query: gql(subscription.replace('$CONV', ids.CONV)) })
      .subscribe({ next: (e) => events.push(e.data) });
    await new Promise((r) => setTimeout(r, 300));

    const sent = await run<{ sendMessage: { reply: { content: string } | null } }>(sendMessage);
    expect(sent.sendMessage.reply?.content.length).toBeGreaterThan(0);
    const deadline = Date.now() + 10_000;
    while (events.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(events).toEqual([
      { messageAdded: expect.objectContaining({ turnIndex: 0, role: 'USER' }) },
      { messageAdded: expect.objectContaining({ turnIndex: 1, role: 'ASSISTANT' }) },
    ]);
    watching.unsubscribe();

    await run(addFact);
    await run(rememberThis);
    await t.app.get(JobsService).drain({ timeoutMs: 60_000 });

    const recalled = await run<{
      recall: { edges: { score: number; node: { sourceType: string; text: string } }[] };
    }>(recall);
    expect(recalled.recall.edges.map((e) => e.node.text)).toEqual(
      expect.arrayContaining(['My grandfather taught me to grow tomatoes.']),
    );
    // What the README shows the context answering.
    expect(await run(context)).toMatchObject({ context: contextAnswer });
  });

  it('keeps the scores of two recalls of the same item apart in one normalized cache', async () => {
    const RECALL = gql`
      query Recall($l: ID!, $q: String!) {
        recall(legacyId: $l, query: $q, first: 10) {
          edges {
            score
            node {
              id
              sourceType
              text
            }
          }
        }
      }
    `;
    type Recall = {
      recall: { edges: { score: number; node: { id: string; text: string } }[] };
    };
    const ask = (q: string) =>
      apollo.client.query<Recall>({ query: RECALL, variables: { l: ids.LEGACY, q } });
    const tomatoes = (await ask('tomatoes')).data!;
    const greenhouse = (await ask('greenhouse behind the house')).data!;
    const fact = (r: Recall) => r.recall.edges.find((e) => e.node.text.includes('greenhouse'))!;
    expect(fact(tomatoes).node.id).toBe(fact(greenhouse).node.id);
    expect(fact(tomatoes).score).not.toBe(fact(greenhouse).score);
    // Read back from the cache, after both: each recall its own score for the same item.
    const cached = (q: string) =>
      apollo.client.readQuery<Recall>({ query: RECALL, variables: { l: ids.LEGACY, q } })!;
    expect(fact(cached('tomatoes')).score).toBe(fact(tomatoes).score);
    expect(fact(cached('greenhouse behind the house')).score).toBe(fact(greenhouse).score);
    // The item is one normalized entry, which holds no score.
    const normalized = apollo.client.cache.extract() as Record<string, object>;
    const entry = normalized[`RecallItem:${fact(tomatoes).node.id}`];
    expect(entry).toMatchObject({ id: fact(tomatoes).node.id });
    expect(entry).not.toHaveProperty('score');
  });

  it('keeps the scores of two contexts apart, and names their items by recallItemId', async () => {
    const CONTEXT = gql`
      query Context($c: ID!, $q: String!) {
        context(conversationId: $c, query: $q) {
          items {
            recallItemId
            sourceId
            sourceType
            section
            score
          }
        }
      }
    `;
    type Context = {
      context: { items: { recallItemId: string; sourceType: string; score: number }[] };
    };
    const ask = async (q: string) =>
      (
        await apollo.client.query<Context>({
          query: CONTEXT,
          variables: { c: ids.CONV, q },
          fetchPolicy: 'network-only',
        })
      ).data!;
    const first = await ask('Where did Joe grow things?');
    const second = await ask('What did my grandfather teach me?');
    const shared = first.context.items.find((a) =>
      second.context.items.some((b) => b.recallItemId === a.recallItemId),
    )!;
    expect(shared).toBeDefined();
    const other = second.context.items.find((b) => b.recallItemId === shared.recallItemId)!;
    expect(other.score).not.toBe(shared.score);
    const cached = (q: string) =>
      apollo.client.readQuery<Context>({ query: CONTEXT, variables: { c: ids.CONV, q } })!;
    const again = (c: Context) =>
      c.context.items.find((i) => i.recallItemId === shared.recallItemId)!;
    expect(again(cached('Where did Joe grow things?')).score).toBe(shared.score);
    expect(again(cached('What did my grandfather teach me?')).score).toBe(other.score);
    // One id scheme: a context item's recallItemId is what recall calls the item.
    expect(shared.recallItemId).toMatch(/^(FACT|MEMORY|TURN|SUMMARY):[0-9a-f-]{36}$/);
  });

  it('pages facts and recall with fetchMore, merged by relayStylePagination', async () => {
    for (const content of [
      'Joe kept bees at the bottom of the orchard.',
      'Joe repaired clocks for the whole village.',
      'Joe sang bass in the church choir.',
      'Joe fished on Lake Erie every August.',
      'Joe taught his grandchildren to play cribbage.',
    ]) {
      await apollo.client.mutate({
        mutation: gql`
          mutation Add($l: ID!, $c: String!) {
            addFact(input: { legacyId: $l, content: $c, category: OTHER }) {
              id
            }
          }
        `,
        variables: { l: ids.LEGACY, c: content },
      });
    }
    const FACTS = gql`
      query Facts($l: ID!, $first: Int, $after: String) {
        facts(legacyId: $l, first: $first, after: $after) {
          edges {
            cursor
            node {
              id
              content
            }
          }
          pageInfo {
            hasNextPage
            endCursor
          }
        }
      }
    `;
    const all = await pages(FACTS, { l: ids.LEGACY, first: 2 }, 'facts');
    expect(all.length).toBe(6);
    expect(new Set(all.map((n) => n.id)).size).toBe(6);

    const RECALL = gql`
      query RecallPage($l: ID!, $q: String!, $first: Int, $after: String) {
        recall(legacyId: $l, query: $q, first: $first, after: $after) {
          edges {
            cursor
            score
            node {
              id
              text
            }
          }
          pageInfo {
            hasNextPage
            endCursor
          }
        }
      }
    `;
    const direct = (
      await apollo.client.query<{ recall: { edges: { node: { id: string } }[] } }>({
        query: RECALL,
        variables: { l: ids.LEGACY, q: 'what Joe did', first: 6 },
        fetchPolicy: 'network-only',
      })
    ).data!.recall.edges.map((e) => e.node.id);
    const paged = await pages(RECALL, { l: ids.LEGACY, q: 'what Joe did', first: 2 }, 'recall');
    expect(paged.slice(0, 6).map((n) => n.id)).toEqual(direct);
  });

  /** Every page of a connection through one watched query: the first, then fetchMore. */
  async function pages(
    query: DocumentNode,
    variables: OperationVariables,
    field: string,
  ): Promise<{ id: string }[]> {
    type Page = Record<
      string,
      {
        edges: { node: { id: string } }[];
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      }
    >;
    const watched = apollo.client.watchQuery<Page>({
      query,
      variables,
      fetchPolicy: 'network-only',
    });
    const subscription = watched.subscribe(() => undefined);
    try {
      let page = (await firstValueFrom(watched.pipe(filter((r) => !r.loading)))).data as Page;
      for (let i = 0; i < 10 && page[field].pageInfo.hasNextPage; i++) {
        await watched.fetchMore({ variables: { after: page[field].pageInfo.endCursor } });
        // The field as the cache now holds it for the first page's variables: merged.
        page = apollo.client.readQuery<Page>({ query, variables })!;
      }
      // The merged list, as the cache gives it: every page's edges, in order, each once.
      return page[field].edges.map((e) => e.node);
    } finally {
      subscription.unsubscribe();
    }
  }
});
