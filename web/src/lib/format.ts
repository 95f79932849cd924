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
