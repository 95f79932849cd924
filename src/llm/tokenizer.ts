import { countTokens as countO200k, encode, decode } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Token counting with a real BPE tokenizer (o200k_base, the encoding of current OpenAI models),
 * shipped in the package: nothing is downloaded. Other models' tokenizers differ by a few per
 * cent, which the context budget's margin absorbs.
 */
export const TOKENIZER_NAME = 'o200k_base';

/**
 * Runs of letters, of white space or of punctuation this long are cut before encoding: BPE time
 * grows with the square of one pre-token's length (32,000 repeated letters took 0.4 s of
 * blocked event loop) and no real word is this long. Text without such runs is encoded whole,
 * exactly as before. The fixed-length pattern cannot backtrack beyond its 200 characters.
 */
const LONG_RUN = /[\p{L}\p{M}]{200}|\s{200}|[^\s\p{L}\p{M}\p{N}]{200}/gu;

function pieces(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    const end = match.index + match[0].length;
    out.push(text.slice(start, end));
    start = end;
  }
  if (start === 0) return [text];
  if (start < text.length) out.push(text.slice(start));
  return out;
}

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  let total = 0;
  for (const piece of pieces(text)) total += countO200k(piece);
  return total;
}

/** The longest prefix of `text` that fits in `maxTokens` tokens. */
export function truncateToTokens(text: string, maxTokens: number): string {
  const tokens: number[] = [];
  for (const piece of pieces(text)) {
    for (const token of encode(piece)) tokens.push(token);
    if (tokens.length > maxTokens) break;
  }
  if (tokens.length <= maxTokens) return text;
  return decode(tokens.slice(0, maxTokens));
}
