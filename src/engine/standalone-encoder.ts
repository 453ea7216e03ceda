// The media encoder started alone, without a language model (a remote engine's local encoder): what the
// Node and browser factories' encoder setups start, with the device it runs on and one destroy() for both.
// With stallTimeoutMs, as an engine with that option: its start (the checkpoint opened, the device chosen,
// the encoder started) and each encode it is asked for fail with EngineStalledError, naming what they
// waited on, when nothing moves for that long (no phase change, no GPU operation, no prepare or encode).

import type { LifecycleCounters, MediaEncoder } from '../encoder/media-encoder';
import { InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { DeviceChoice } from './engine-model';
import { createWatched, pendingGpuState, StallWatch } from './stall';

export interface StandaloneMediaEncoder {
  media: MediaEncoder;
  device: DeviceChoice;
  /**
   * `p` (work of this encoder's: an image's prepare and encode), or EngineStalledError when the encoder
   * gets nowhere for stallTimeoutMs while it waits; `p` itself without a stall timeout. Once stalled, every
   * later call fails at once with the same error.
   */
  watch<T>(p: Promise<T>): Promise<T>;
  /** Stops the encoder and frees its GPU device. */
  destroy(): void;
}

/** A factory's encoder setup, as far as starting the encoder alone needs it. */
export interface EncoderSetup {
  source: { where: string };
  chosen: { choice: DeviceChoice };
  gpu: GpuContext | undefined;
  startEncoder(modelId: string, lifecycle: LifecycleCounters): Promise<MediaEncoder>;
}

export function newLifecycleCounters(): LifecycleCounters {
  return { encoding: 0, ready: 0, staged: 0, spliced: 0, prefilled: 0, released: 0 };
}

/**
 * Start the encoder alone: `setup` opens the checkpoint and chooses the device (naming each phase), then the
 * encoder starts. Under the stall watchdog when stallTimeoutMs is set; the device is freed if the start
 * fails, also one that setup hands over after the watchdog gave up.
 */
export async function startStandaloneEncoder(
  setup: (phase: (what: string) => void) => Promise<EncoderSetup>,
  options: { modelId?: string; stallTimeoutMs?: number },
): Promise<StandaloneMediaEncoder> {
  let made: EncoderSetup | undefined;
  let abandoned = false;
  const start = async (phase: (what: string) => void): Promise<StandaloneMediaEncoder> => {
    const s = await setup(phase);
    if (abandoned) {
      s.gpu?.destroy();
      throw new InternalError("the media encoder's start was abandoned before its device was ready");
    }
    made = s;
    phase('loading the vision tower and compiling its pipelines');
    const media = await s.startEncoder(options.modelId ?? s.source.where, newLifecycleCounters());
    return standalone(s, media, options.stallTimeoutMs);
  };
  try {
    if (options.stallTimeoutMs === undefined) return await start(() => {});
    return await createWatched(
      options.stallTimeoutMs,
      () => made?.gpu?.pending,
      undefined,
      (_, phase) => start(phase),
      'starting a media encoder alone',
    );
  } catch (e) {
    abandoned = true;
    made?.gpu?.destroy();
    throw e;
  }
}

function standalone(setup: EncoderSetup, media: MediaEncoder, stallTimeoutMs: number | undefined): StandaloneMediaEncoder {
  const gpu = setup.gpu;
  let waiting = 0;
  const stall =
    stallTimeoutMs === undefined
      ? undefined
      : new StallWatch(stallTimeoutMs, {
          activity: () => 'encoding images (a media encoder started alone)',
          busy: () => waiting > 0,
          progress: () => `${gpu?.pending.settled ?? '-'}|${JSON.stringify(media.stats())}`,
          state: () => ({ imagesWaiting: waiting, encoder: media.state(), gpu: pendingGpuState(gpu?.pending) }),
        });
  return {
    media,
    device: setup.chosen.choice,
    watch: async <T>(p: Promise<T>): Promise<T> => {
      if (!stall) return p;
      waiting++;
      try {
        stall.poke();
        return await stall.guard(p);
      } finally {
        waiting--;
      }
    },
    destroy: () => {
      stall?.stop();
      media.destroy();
      gpu?.destroy();
    },
  };
}
