// limits.ts: the bounds on a response_format schema (src/grammar/schema-check.ts enforces them). They keep
// compile times short and XGrammar's WebAssembly stack (64 KiB) safe: a schema nested 55 levels deep
// overflowed it in 0.1.27 and damaged the instance for every later request.

/** Deepest nesting of subschemas (following $refs), the two levels a rewritten enum adds included. */
export const MAX_DEPTH = 16;
/** Most values one enum may list (and integers one bounded range may hold). */
export const MAX_ENUM_VALUES = 256;
/** Most subschemas one schema may hold. */
export const MAX_SUBSCHEMAS = 1000;
/**
 * Largest minLength / maxLength. XGrammar precomputes the mask of every position of a length-bounded
 * string over the whole vocabulary: about 15 ms per character of bound with SmolVLM's 49,280 tokens
 * (maxLength 32: 0.5 s, 100: 2.1 s; 2.7 times that with 131,072 tokens), all of it blocking the thread.
 */
export const MAX_STRING_LENGTH = 64;
/** Largest minItems / maxItems (far cheaper: maxItems 50 compiles in about 20 ms). */
export const MAX_ITEMS = 256;
