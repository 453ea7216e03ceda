// Errors of constrained decoding (response_format json_object / json_schema, src/grammar/): XGrammar that
// does not load or stopped being usable, schemas with keywords the grammar cannot enforce, schemas XGrammar
// does not compile.

import { TesseraError } from './base';

/**
 * XGrammar (@mlc-ai/web-xgrammar, the WebAssembly grammar engine behind response_format) could not be
 * loaded, or its WebAssembly instance aborted earlier and is no longer trusted. Requests without
 * response_format are unaffected.
 */
export class GrammarLoadError extends TesseraError {
  override readonly name = 'GrammarLoadError';
  readonly code = 'GRAMMAR_LOAD';
  constructor(detail: string, hint: string, options?: { cause?: unknown }) {
    super(`structured output (response_format json_object / json_schema) is unavailable: ${detail}; ${hint}`, options);
  }
}

/** One schema keyword the grammar cannot enforce, where it is (a JSON path from the schema's root, `$`). */
export interface SchemaProblem {
  /** `$`, `$.properties.when`, `$.items.anyOf[1]`, ... */
  path: string;
  /** The keyword as written (`format`, `pattern`, `minimum`, ...). */
  keyword: string;
  /** What is wrong with it, e.g. `format "date-time"` or `is not supported`. */
  reason: string;
}

/**
 * response_format's JSON schema uses keywords (or combinations) that constrained decoding cannot enforce.
 * Refused before anything is compiled: a keyword the grammar silently ignored would let through answers
 * that do not validate. Every problem is listed with its path.
 */
export class UnsupportedSchemaError extends TesseraError {
  override readonly name = 'UnsupportedSchemaError';
  readonly code = 'UNSUPPORTED_SCHEMA';
  constructor(readonly problems: readonly SchemaProblem[]) {
    const lines = problems.map((p) => `  ${p.path}: ${p.reason}`);
    super(
      `response_format.json_schema.schema uses ${problems.length} thing(s) constrained decoding cannot enforce:\n` +
        `${lines.join('\n')}\n` +
        'Remove or rewrite them (enforce them on the parsed answer instead), or ask for { type: "json_object" }.',
    );
  }
}

/** XGrammar did not compile response_format's schema (or the json_object grammar): carries what it said. */
export class SchemaCompileError extends TesseraError {
  override readonly name = 'SchemaCompileError';
  readonly code = 'SCHEMA_COMPILE';
  constructor(
    readonly what: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `XGrammar could not compile ${what}: ${detail}. Simplify the schema (fewer nested levels, fewer enum values), ` +
        'or ask for { type: "json_object" }.',
      options,
    );
  }
}
