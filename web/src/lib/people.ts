/** A member as the API returns them (`legacy.members { user { ... } }`). */
export interface Person {
  id: string;
  displayName?: string | null;
  email?: string | null;
}

/**
 * How the console names someone: "You", their name, their email (shown to owners and admins
 * only), "A member with no name" (never their id), or "A former member".
 */
export function nameOf(people: readonly Person[], id: string, me?: string): string {
  if (id === me) return 'You';
  const person = people.find((p) => p.id === id);
  return person
    ? (person.displayName ?? person.email ?? 'A member with no name')
    : 'A former member';
}
