// The engine behind the server and its state: 'loading' until the model is ready, 'ready', 'recovering'
// while a lost GPU device is recreated, 'failed' when loading failed, 'closing' at shutdown. Requests get
// the engine only when it is ready; otherwise EngineUnavailableError (503 with Retry-After).

import type { Engine } from '../engine/engine';
import { DeviceLostError, EngineUnavailableError } from '../errors';

export type EngineState = 'loading' | 'ready' | 'recovering' | 'failed' | 'closing';

export class EngineHost {
  private current: Engine | undefined;
  private loadError: unknown;
  private stateNow: EngineState = 'loading';

  /**
   * `engine`: the engine, or the promise of it while the model loads. `ownsEngine` (default true): close()
   * destroys it.
   */
  constructor(
    engine: Engine | Promise<Engine>,
    private readonly ownsEngine = true,
  ) {
    if ('chat' in engine) {
      this.current = engine;
      this.stateNow = 'ready';
    } else {
      engine.then(
        (e) => {
          if (this.stateNow === 'closing') return this.ownsEngine ? e.destroy() : undefined;
          this.current = e;
          this.stateNow = 'ready';
        },
        (e: unknown) => {
          this.loadError = e;
          this.stateNow = 'failed';
        },
      );
    }
  }

  get state(): EngineState {
    if (this.stateNow === 'ready' && this.current?.deviceLost) this.startRecovery();
    return this.stateNow;
  }

  /** The engine once loaded (for stats and metrics), whatever its state. */
  get engine(): Engine | undefined {
    return this.current;
  }

  /** Why loading failed (state 'failed'). */
  get failure(): unknown {
    return this.loadError;
  }

  /** The engine, ready for a request; EngineUnavailableError otherwise. */
  acquire(): Engine {
    const state = this.state;
    if (state === 'ready' && this.current) return this.current;
    throw this.unavailable(state);
  }

  unavailable(state: EngineState = this.state): EngineUnavailableError {
    return new EngineUnavailableError(state === 'ready' ? 'loading' : state, state === 'recovering' ? 2 : 5, this.loadError);
  }

  /** A request failed: after a device loss, recreate the device now rather than on the next request. */
  noteFailure(e: unknown): void {
    if (e instanceof DeviceLostError || this.current?.deviceLost) this.startRecovery();
  }

  private startRecovery(): void {
    const engine = this.current;
    if (!engine || this.stateNow !== 'ready') return;
    this.stateNow = 'recovering';
    engine.recoverDevice().then(
      () => {
        if (this.stateNow === 'recovering') this.stateNow = 'ready';
      },
      () => {
        // recreating failed; the next request's acquire() tries again
        if (this.stateNow === 'recovering') this.stateNow = 'ready';
      },
    );
  }

  /** Stop taking requests; destroy the engine if it is this host's (now, or when it finishes loading). */
  close(): void {
    this.stateNow = 'closing';
    if (this.ownsEngine) this.current?.destroy();
  }
}
