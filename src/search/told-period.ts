import { parseTimeExpression } from './time-expressions.js';

/**
 * The period a turn tells of ("last Friday", "two weeks ago", "tomorrow"), read against when
 * it was said in its author's time zone; null when it names none. Read with a query's grammar,
 * so that a turn and a question naming the same period meet on the time path.
 */
export function toldPeriod(
  text: string,
  said: Date,
  timeZone: string | null,
): { from: Date; to: Date } | null {
  const range = parseTimeExpression(text, said, timeZone ?? 'UTC');
  return range && { from: range.from, to: range.to };
}
