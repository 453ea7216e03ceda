// The media encoder started alone, without a language model (a remote engine's local encoder): what the
// Node and browser factories' encoder setups start, with the device it runs on and one destroy() for both.

import type { LifecycleCounters, MediaEncoder } from '../encoder/media-encoder';
import type { GpuContext } from '../gpu/context';
import type { DeviceChoice } from './engine-model';

export interface StandaloneMediaEncoder {
  media: MediaEncoder;
  device: DeviceChoice;
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

export async function startStandaloneEncoder(setup: EncoderSetup, modelId: string | undefined): Promise<StandaloneMediaEncoder> {
  try {
    const media = await setup.startEncoder(modelId ?? setup.source.where, newLifecycleCounters());
    return {
      media,
      device: setup.chosen.choice,
      destroy: () => {
        media.destroy();
        setup.gpu?.destroy();
      },
    };
  } catch (e) {
    setup.gpu?.destroy();
    throw e;
  }
}
