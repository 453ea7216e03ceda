// How the command line reports a failure: one line, `tessera: <Name>: <message>`, for Tessera's named
// errors (thrown here or rebuilt from an encoder worker) and for anything else; the stack trace and the
// chain of causes only with --verbose. Usage errors add the usage text.

import { inspect } from 'node:util';
import { TesseraError } from '../errors';
import { USAGE, UsageError } from './args';

function stackWithCauses(e: Error): string {
  const lines = [e.stack ?? `${e.name}: ${e.message}`];
  let cause: unknown = e.cause;
  for (let depth = 0; cause !== undefined && depth < 8; depth++) {
    lines.push(`caused by: ${cause instanceof Error ? (cause.stack ?? `${cause.name}: ${cause.message}`) : inspect(cause)}`);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return lines.join('\n');
}

/** The text printed to stderr for an error that ended the command. */
export function formatCliError(e: unknown, verbose: boolean): string {
  if (e instanceof UsageError) return `tessera: ${e.message}\n\n${USAGE}`;
  if (!(e instanceof Error)) return `tessera: ${inspect(e)}`;
  const line = `tessera: ${e.name}: ${e.message}`;
  if (verbose) return `${line}\n\n${stackWithCauses(e)}`;
  // Tessera's named errors and the system's (a file not found) say all there is; anything else is most
  // likely a bug, so say how to see where it came from.
  const expected = e instanceof TesseraError || typeof (e as { syscall?: unknown }).syscall === 'string';
  return expected ? line : `${line}\n(run again with --verbose for the stack trace)`;
}

/** Exit status: 2 for a usage error, 1 for any other failure. */
export function exitCodeFor(e: unknown): number {
  return e instanceof UsageError ? 2 : 1;
}
