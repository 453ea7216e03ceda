// Constrained decoding for response_format (json_object, json_schema) with XGrammar: what src/engine uses.
// One GrammarCache per model (its tokenizer's vocabulary), one ResponseMatcher per request.

export { GrammarCache, type GrammarCacheOptions } from './grammar-cache';
export { grammarSource, type GrammarSource, type ResponseFormatSpec } from './grammar-source';
export { loadXGrammar } from './load-xgrammar';
export { type CompileInfo, ResponseMatcher } from './response-matcher';
export { checkSchema } from './schema-check';
export { type GrammarVocabulary, grammarVocabulary, vocabTypeOf, type VocabType } from './tokenizer-info';
