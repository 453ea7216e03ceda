// Named errors. Every message says what happened, gives the numbers, and says what to do.
// Each class carries a stable `code` so callers (and errors crossing a worker boundary) can branch on it,
// and its name as a literal (`override readonly name = 'FooError'`), which survives minification.
//
// A hint names an option by where it is set: "the request option tessera.encodeTimeoutMs" (a field of
// chat.completions.create's request), "the engine option encoder.maxBatchTiles" (a field of createEngine's
// options). test/unit/error-hints.test.ts checks every such path against the public option types.
//
// One file per area; everything is exported from here, and src/protocol/errors.ts keeps the class-by-code
// table complete (tsc fails until a new class is listed there).

export * from './base';
export * from './engine';
export * from './gpu';
export * from './checkpoint';
export * from './request';
export * from './media';
export * from './encoder';
export * from './grammar';
export * from './http';
export * from './remote';
export * from './storage';
