import { countTokens as countO200k, encode, decode } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Token counting with a real BPE tokenizer (o200k_base, the encoding of current OpenAI models),
 * shipped in the package: nothing is downloaded. Other models' tokenizers differ by a few per
 * cent, which the context budget's margin absorbs.
 */
export const TOKENIZER_NAME = 'o200k_base';

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return countO200k(text);
}

/** The longest prefix of `text` that fits in `maxTokens` tokens. */
export function truncateToTokens(text: string, maxTokens: number): string {
  const tokens = encode(text);
  if (tokens.length <= maxTokens) return text;
  return decode(tokens.slice(0, maxTokens));
}
