// The response_format section's figures and table (model-json.ts measures them in Node; bench/model/model.ts
// prints them). No engine imports here: model.ts runs outside Vite.

export interface JsonRunOptions {
  modelDir: string;
  /** Most new tokens per request (an answer may end sooner: the figures are per decode step). */
  maxNewTokens: number;
  /** Measured requests per side (after one of each to warm up). */
  reps: number;
  log: (line: string) => void;
}

export interface JsonFigures {
  /** Decode tokens per second, median over the requests of each side. */
  freeTokensPerSecond: number;
  schemaTokensPerSecond: number;
  /** schema / free (goal >= 0.9). */
  ratio: number;
  /** Decode steps measured per side. */
  freeSteps: number;
  schemaSteps: number;
  /** Tokens the schema answers had, and whether they parsed. */
  schemaAnswers: Array<{ tokens: number; parses: boolean }>;
  grammar: {
    tokenizerInfoMs: number;
    /** The 20-field schema: first compile, and asked again (from the cache). */
    compile20Ms: number;
    compile20CachedMs: number;
    /** Per token while walking a schema answer: the mask (fillMask) and accepting the token, median ms. */
    maskMs: number;
    acceptMs: number;
  };
}

/** The section's table, for the report. */
export function formatJson(f: JsonFigures): string {
  const row = (a: string, b: string, c: string) => `| ${a} | ${b} | ${c} |`;
  return [
    'response_format (Node, WebGPU, f32): decode with a JSON schema against free decoding, same engine and prompt',
    row('figure', 'value', 'goal'),
    row('---', '---', '---'),
    row('decode tok/s, free (median step)', f.freeTokensPerSecond.toFixed(2), ''),
    row('decode tok/s, schema (median step)', f.schemaTokensPerSecond.toFixed(2), ''),
    row('schema / free', `${f.ratio.toFixed(2)}x`, '>= 0.9x'),
    row('schema answers (tokens, parse)', f.schemaAnswers.map((a) => `${a.tokens} ${a.parses ? 'ok' : 'FAIL'}`).join(', '), 'all parse'),
    row('TokenizerInfo (vocabulary, once per model)', `${f.grammar.tokenizerInfoMs.toFixed(0)} ms`, ''),
    row(
      '20-field schema: compile, then cached',
      `${f.grammar.compile20Ms.toFixed(0)} ms, ${f.grammar.compile20CachedMs.toFixed(2)} ms`,
      '',
    ),
    row('per token: mask, accept (median)', `${f.grammar.maskMs.toFixed(3)} ms, ${f.grammar.acceptMs.toFixed(3)} ms`, ''),
  ].join('\n');
}
