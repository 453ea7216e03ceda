// A checkpoint's config.json, read and parsed by its family (both backends start here).

import { ModelConfigError, ModelFileError } from '../errors';
import type { ModelSource } from '../io/model-source';
import type { ModelConfig } from '../model/config';
import { parseModelConfig } from './registry';

export async function readModelConfig(source: Pick<ModelSource, 'where' | 'readText'>): Promise<ModelConfig> {
  const text = await source.readText('config.json');
  if (text === undefined) throw new ModelFileError(`${source.where} has no config.json; point Tessera at a Hugging Face checkpoint folder`);
  try {
    return parseModelConfig(JSON.parse(text));
  } catch (e) {
    if (e instanceof SyntaxError) throw new ModelConfigError(`config.json in ${source.where} is not valid JSON: ${e.message}`);
    throw e;
  }
}
