// Errors of the engine as a whole (not of one request's input): a stall the engine's watchdog caught.

import { TesseraError } from './base';

/**
 * The engine had work to do and got nowhere for longer than its stall timeout (the engine option
 * stallTimeoutMs): no GPU operation finished, no step ran, no encode settled. Always a bug (in Tessera, the
 * GPU driver or onnxruntime), never the caller's input. `state` is what it was waiting on (src/engine/stall.ts).
 */
export class EngineStalledError extends TesseraError {
  override readonly name = 'EngineStalledError';
  readonly code = 'ENGINE_STALLED';
  constructor(
    /**
     * What the engine was doing: 'creating the engine (<phase>)' or 'serving requests'; for a media encoder
     * started alone (a remote engine's), 'starting a media encoder alone (<phase>)' or 'encoding images (...)'.
     */
    readonly activity: string,
    readonly stalledMs: number,
    /** The engine's state when the watchdog fired, as JSON text. */
    readonly state: string,
  ) {
    super(
      `the engine made no progress for ${Math.round(stalledMs / 1000)} s while ${activity} (the engine option stallTimeoutMs); ` +
        `it was waiting on: ${state}. This is a bug: report it with this message. The engine cannot go on: destroy it ` +
        'and create a new one.',
    );
  }
}
