/**
 * Names people read and the model sees. A name is one line: control and format characters
 * (line breaks, tabs, bidirectional overrides, zero-width joiners) would let a name lay out text
 * that is not a name, such as a second line said by someone else in a together conversation.
 */

/** Characters a name may not hold: control (Cc), format (Cf) and line or paragraph separators. */
const NOT_IN_A_NAME = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const NOT_IN_A_NAME_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\s]+/gu;

export const DISPLAY_NAME_MAX = 100;

/** Why a name someone chose is refused, or null when it is fine. */
export function displayNameProblem(name: string): string | null {
  if (NOT_IN_A_NAME.test(name)) {
    return 'A display name is one line of text: no line breaks, tabs or invisible characters.';
  }
  const trimmed = name.trim();
  if (trimmed.length === 0 || [...trimmed].length > DISPLAY_NAME_MAX) {
    return `A display name has 1 to ${DISPLAY_NAME_MAX} characters.`;
  }
  return null;
}

/**
 * A name as it may be shown, whatever its source (an identity provider's claim, an imported
 * turn's speaker, a name stored before names were checked): one line, spaces collapsed, at most
 * DISPLAY_NAME_MAX characters; null when nothing is left.
 */
export function cleanName(name: string | null | undefined): string | null {
  if (typeof name !== 'string') return null;
  const clean = [...name.replace(NOT_IN_A_NAME_ALL, ' ').trim()]
    .slice(0, DISPLAY_NAME_MAX)
    .join('')
    .trim();
  return clean === '' ? null : clean;
}

/**
 * A name marked as a name wherever it leads a line that others read or the model is given
 * (`"Olga": …`): quoted, its own quotes escaped, so that nothing in it reads as the line's text
 * or as another line.
 */
export function markedName(name: string | null | undefined, fallback: string): string {
  return JSON.stringify(cleanName(name) ?? fallback);
}

/**
 * A marked name as a reply may address someone with it: plain when it is only a name's letters
 * (`Ana, …`), still marked when it holds anything else, so that it never reads as a line.
 */
export function addressedName(marked: string): string {
  let name: unknown = marked;
  try {
    name = JSON.parse(marked);
  } catch {
    // not marked: taken as it is, and cleaned below
  }
  const clean = cleanName(typeof name === 'string' ? name : null);
  if (!clean) return '';
  return /^[\p{L}\p{M}' .-]+$/u.test(clean) ? clean : JSON.stringify(clean);
}
