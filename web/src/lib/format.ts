const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function when(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '';
}

/** ENUM_VALUE → "Enum value", for labels. */
export function label(value: string): string {
  const words = value.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function errorMessage(error: { graphQLErrors?: { message: string }[]; message: string }) {
  return error.graphQLErrors?.length
    ? error.graphQLErrors.map((e) => e.message).join(' ')
    : error.message.replace(/^\[Network\] /, '');
}

const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** A day, without the time: when a story happened, a summary's period. */
export function day(iso: string | null | undefined): string {
  return iso ? dateOnly.format(new Date(iso)) : '';
}

/** A legacy role with its article, as a sentence says it: "an owner", "a member". */
export function role(value: string): string {
  const word = value.toLowerCase();
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

/** What a remembered item is, in a family's words. */
export function sourceName(sourceType: string): string {
  switch (sourceType) {
    case 'FACT':
      return 'Fact';
    case 'MEMORY':
      return 'Your memory';
    case 'PERIOD_SUMMARY':
      return 'Looking back';
    case 'PROFILE':
      return 'Your profile';
    case 'STORY':
      return 'Story';
    case 'SUMMARY':
      return 'Conversation summary';
    case 'TURN':
      return 'From a conversation';
    default:
      return label(sourceType);
  }
}

/**
 * The one word for removing each kind of remembered item, the same on every page: a memory is
 * forgotten (and can be brought back for a while), a fact or a story deleted, a profile entry
 * cleared.
 */
export function removeWord(sourceType: string): string {
  switch (sourceType) {
    case 'MEMORY':
      return 'Forget';
    case 'PROFILE':
      return 'Clear';
    default:
      return 'Delete';
  }
}

/** A turn range as people count messages: from 1, "message 3" or "messages 3 to 5". */
export function messages(range: { start: number; end: number }): string {
  return range.start === range.end
    ? `message ${range.start + 1}`
    : `messages ${range.start + 1} to ${range.end + 1}`;
}

/** A sentence ended once: "Added “Joe kept bees.”" never gets a second full stop. */
export function sentence(text: string): string {
  return /[.!?…]["”’)]*$/.test(text.trim()) ? text.trim() : `${text.trim()}.`;
}
