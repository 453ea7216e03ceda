// The Qwen3-VL family: Qwen3-VL-2B/4B/8B-Instruct (model_type qwen3_vl, dense decoders), images and text.

import type { ModelFamily } from '../family';
import { loadQwenProcessor } from '../qwen-processor';
import { qwen3_vlGguf } from './gguf';
import { parseQwen3VlConfig } from './config';

export const qwen3_vl: ModelFamily = {
  id: 'qwen3_vl',
  modelTypes: ['qwen3_vl'],
  architecture: 'Qwen3-VL ViT with learned and 2-D rotary positions + DeepStack mergers + Qwen3 decoder with interleaved M-RoPE',
  parseConfig: parseQwen3VlConfig,
  loadProcessor: (files, config) => loadQwenProcessor(files, config),
  gguf: qwen3_vlGguf,
};
