import { registerEnumType } from '@nestjs/graphql';
import { FACT_CATEGORIES } from '../llm/language-model.js';

export enum FactCategory {
  PERSONALITY = 'PERSONALITY',
  HOBBY = 'HOBBY',
  RELATIONSHIP = 'RELATIONSHIP',
  MILESTONE = 'MILESTONE',
  OCCUPATION = 'OCCUPATION',
  PREFERENCE = 'PREFERENCE',
  HABIT = 'HABIT',
  OTHER = 'OTHER',
}

// The language model's categories are these, in the same spelling.
const categoriesMatch: Record<(typeof FACT_CATEGORIES)[number], FactCategory> = FactCategory;
void categoriesMatch;

export enum FactVisibility {
  /** Only its author sees it (the default). */
  PRIVATE = 'PRIVATE',
  /** Every member of the legacy sees it. */
  SHARED = 'SHARED',
}

export enum FactStatus {
  ACTIVE = 'ACTIVE',
  /** A newer fact updated or corrected it; kept as history. */
  SUPERSEDED = 'SUPERSEDED',
  /** Soft-deleted; restoreFact brings it back. */
  DELETED = 'DELETED',
}

/** What happened to a fact, as factChanged reports it. */
export enum FactChange {
  CREATED = 'CREATED',
  /** Content, category, mention count or status (superseded) changed. */
  UPDATED = 'UPDATED',
  VISIBILITY_CHANGED = 'VISIBILITY_CHANGED',
  DELETED = 'DELETED',
  RESTORED = 'RESTORED',
  /** The fact is no longer visible to this subscriber (unshared, deleted): drop it. */
  REMOVED = 'REMOVED',
}

/** One entry of a fact's history. */
export enum FactAction {
  CREATED = 'CREATED',
  /** Said again: the mention count went up and a source was added. */
  MENTIONED = 'MENTIONED',
  /** Its author changed its content or category. */
  UPDATED = 'UPDATED',
  VISIBILITY_CHANGED = 'VISIBILITY_CHANGED',
  DELETED = 'DELETED',
  RESTORED = 'RESTORED',
  /** A newer fact updated or corrected it (see relatedFact and detail). */
  SUPERSEDED = 'SUPERSEDED',
}

export enum FactSourceKind {
  CONVERSATION = 'CONVERSATION',
  MANUAL = 'MANUAL',
  /** A passage of a story or document (its page). */
  STORY = 'STORY',
}

registerEnumType(FactCategory, { name: 'FactCategory' });
registerEnumType(FactVisibility, { name: 'FactVisibility' });
registerEnumType(FactStatus, { name: 'FactStatus' });
registerEnumType(FactChange, { name: 'FactChange' });
registerEnumType(FactAction, { name: 'FactAction' });
registerEnumType(FactSourceKind, { name: 'FactSourceKind' });
