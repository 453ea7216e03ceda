// Loading a Qwen-VL checkpoint's processor (both Qwen families), sized by the parsed vision tower.

import { InternalError } from '../errors';
import type { ModelConfig } from '../model/config';
import type { ModelFiles } from '../processor/files';
import { QwenProcessor } from '../processor/qwen-processor';

/** A Qwen-VL checkpoint's processor, sized by its parsed vision tower. */
export function loadQwenProcessor(files: ModelFiles, config: ModelConfig): Promise<QwenProcessor> {
  const v = config.qwenVision;
  if (!v) throw new InternalError(`${config.modelType}: the parsed config has no vision tower`);
  return QwenProcessor.load(files, {
    modelType: config.modelType,
    ...v,
    tokensPerSecond: v.kind === 'qwen2_5_vl' ? v.tokensPerSecond : undefined,
  });
}
