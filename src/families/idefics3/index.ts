// The Idefics3 family: SmolVLM (model_type idefics3) and SmolVLM2 (smolvlm), images and video.

import { Idefics3Processor } from '../../processor/processor';
import type { ModelFamily } from '../family';
import { parseIdefics3Config } from './config';
import { idefics3Gguf } from './gguf';

export const idefics3: ModelFamily = {
  id: 'idefics3',
  modelTypes: ['idefics3', 'smolvlm'],
  architecture: 'SigLIP vision tower + pixel-shuffle connector + Llama decoder',
  parseConfig: parseIdefics3Config,
  loadProcessor: (files, _config, deps) => Idefics3Processor.load(files, { decodeImage: deps.decodeImage }),
  gguf: idefics3Gguf,
};
