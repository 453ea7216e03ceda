// Loading a checkpoint on the GPU: its config.json parsed by its family, then the model loaders.

import type { GpuContext } from '../gpu/context';
import type { ModelSource } from '../io/model-source';
import {
  type LoadedEncoderModel,
  type LoadedModel,
  loadEncoderModelWithConfig,
  loadModelWithConfig,
  type LoadModelOptions,
} from '../model/load';
import { readModelConfig } from './read-config';

/** The language model (and, unless options.vision is false, the media towers) of the checkpoint at `source`. */
export async function loadModel(gpu: GpuContext, source: ModelSource, options: LoadModelOptions = {}): Promise<LoadedModel> {
  return loadModelWithConfig(gpu, source, await readModelConfig(source), options);
}

/** Only the media encoder of the checkpoint at `source` (what an encoder worker needs). */
export async function loadEncoderModel(
  gpu: GpuContext,
  source: ModelSource,
  options: Parameters<typeof loadEncoderModelWithConfig>[3] = {},
): Promise<LoadedEncoderModel> {
  return loadEncoderModelWithConfig(gpu, source, await readModelConfig(source), options);
}
