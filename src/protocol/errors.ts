// Errors crossing a worker boundary keep their class: Tessera's named errors are sent as
// {name, message, stack, fields} and rebuilt as instances of the same class on the other side, so callers
// can still `instanceof ImageDecodeError`. Anything else arrives as a plain Error with its name.

import * as Comlink from 'comlink';
import * as errors from '../errors';

interface WireError {
  name: string;
  message: string;
  stack?: string;
  fields: Record<string, unknown>;
}

const classes: Record<string, unknown> = errors;

export function toWireError(e: unknown): WireError {
  if (e instanceof Error) {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) {
      if (v === null || ['string', 'number', 'boolean'].includes(typeof v) || Array.isArray(v)) fields[k] = v;
    }
    return { name: e.name, message: e.message, stack: e.stack, fields };
  }
  return { name: 'Error', message: String(e), fields: {} };
}

export function fromWireError(w: WireError): Error {
  const cls = classes[w.name];
  let err: Error;
  if (typeof cls === 'function' && (cls as { prototype: unknown }).prototype instanceof errors.TesseraError) {
    err = Object.create((cls as { prototype: object }).prototype) as Error;
    Object.defineProperty(err, 'message', { value: w.message, writable: true, configurable: true });
  } else {
    err = new Error(w.message);
  }
  Object.assign(err, w.fields);
  Object.defineProperty(err, 'name', { value: w.name, writable: true, configurable: true });
  if (w.stack) Object.defineProperty(err, 'stack', { value: w.stack, writable: true, configurable: true });
  return err;
}

/** Make comlink send thrown errors with their class (call in the worker and on the main thread). */
export function installErrorTransfer(): void {
  const base = Comlink.transferHandlers.get('throw');
  if (!base) return;
  Comlink.transferHandlers.set('throw', {
    // comlink's own test for "this is a thrown value" (its marker symbol is private)
    canHandle: base.canHandle as (value: unknown) => value is { value: unknown },
    serialize: ({ value }: { value: unknown }) => [toWireError(value), []],
    deserialize: (w: WireError) => {
      throw fromWireError(w);
    },
  } as Comlink.TransferHandler<{ value: unknown }, WireError>);
}
