// The Qwen2.5-VL family: Qwen2.5-VL-3B/7B-Instruct (model_type qwen2_5_vl), images and text.

import type { ModelFamily } from '../family';
import { loadQwenProcessor } from '../qwen-processor';
import { qwen2_5_vlGguf } from './gguf';
import { parseQwen25VlConfig } from './config';

export const qwen2_5_vl: ModelFamily = {
  id: 'qwen2_5_vl',
  modelTypes: ['qwen2_5_vl'],
  architecture: 'Qwen2.5-VL windowed ViT with 2-D rotary + patch merger + Qwen2 decoder with M-RoPE',
  parseConfig: parseQwen25VlConfig,
  loadProcessor: (files, config) => loadQwenProcessor(files, config),
  gguf: qwen2_5_vlGguf,
};
