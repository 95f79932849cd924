import type { Connection } from '../common/pagination/connection.js';
import { seesSources } from './fact-visibility.js';
import type { FactEntity } from './fact.entity.js';
import type { FactModel } from './models/fact.model.js';

/** A page of facts as `viewerId` sees them. */
export function toFactConnection(connection: Connection<FactEntity>, viewerId: string) {
  return {
    ...connection,
    nodes: connection.nodes.map((f) => toFactModel(f, viewerId)),
    edges: connection.edges.map((e) => ({ cursor: e.cursor, node: toFactModel(e.node, viewerId) })),
  };
}

/** A fact as `viewerId` sees it: where it was said is its author's business only. */
export function toFactModel(fact: FactEntity, viewerId: string): FactModel {
  const mine = seesSources(fact, viewerId);
  return {
    ...fact,
    viewerId,
    sourceConversationId: mine ? fact.sourceConversationId : null,
    sourceRangeStart: mine ? fact.sourceRangeStart : null,
    sourceRangeEnd: mine ? fact.sourceRangeEnd : null,
    sourceMessageIds: mine ? fact.sourceMessageIds : [],
  };
}
