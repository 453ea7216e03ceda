// The Voxtral family: Voxtral-Mini (model_type voxtral), audio and text.

import { InternalError } from '../../errors';
import { VoxtralProcessor } from '../../processor/voxtral-processor';
import type { ModelFamily } from '../family';
import { parseVoxtralConfig } from './config';
import { voxtralGguf } from './gguf';

export const voxtral: ModelFamily = {
  id: 'voxtral',
  modelTypes: ['voxtral'],
  architecture: 'Whisper audio encoder + frame-stacking projector + Llama decoder',
  parseConfig: parseVoxtralConfig,
  loadProcessor(files, config) {
    if (!config.audio) throw new InternalError('voxtral: the parsed config has no audio side');
    return VoxtralProcessor.load(files, config.audio.tokensPerChunk, config.audio.audioTokenId);
  },
  gguf: voxtralGguf,
};
