/** The tokenizer as shipped, without the service's long-run cutting: the reference in tests. */
export { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
