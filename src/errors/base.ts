// The base of every named error (src/errors/index.ts lists the areas), and InternalError: a broken invariant
// inside Tessera, never the caller's fault.

export abstract class TesseraError extends Error {
  /**
   * The class name as a literal. Minifiers rename classes (`new.target.name` would read `ne`), and an error
   * rebuilt after crossing a worker keeps only what it carried, so each class states its own name.
   */
  abstract override readonly name: string;
  abstract readonly code: string;
}

/** A broken internal invariant: a bug in Tessera, not in the caller's input. */
export class InternalError extends TesseraError {
  override readonly name = 'InternalError';
  readonly code = 'INTERNAL';
}
