// The checkpoint a Node engine's `model` option names: a folder, an http(s) URL base, a ModelSource, or a
// GGUF model file (`x.gguf`) with its mmproj beside it (the `mmproj` option, or the one mmproj*.gguf in
// its folder).

import { readdirSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ModelFileError } from '../errors';
import { openGgufCheckpoint } from '../families/gguf-checkpoint';
import { UrlSource, type ModelSource } from '../io/model-source';
import { NodeDirSource } from '../io/model-source-node';

export function nodeModelSource(model: string | ModelSource): ModelSource {
  if (typeof model !== 'string') return model;
  return /^https?:\/\//.test(model) ? new UrlSource(model, { useCache: false }) : new NodeDirSource(model);
}

const isGgufPath = (model: unknown): model is string => typeof model === 'string' && /\.gguf$/i.test(model);

/** The mmproj file for a GGUF model: `mmproj` if given (in the model's folder), else the folder's only mmproj*.gguf. */
function mmprojFor(model: string, mmproj: string | undefined): string | undefined {
  const dir = dirname(resolve(model));
  if (mmproj !== undefined) {
    if (dirname(resolve(mmproj)) !== dir) {
      throw new ModelFileError(`the mmproj ${mmproj} must be in the same folder as the model ${model} (${dir})`);
    }
    return basename(mmproj);
  }
  const found = readdirSync(dir).filter((f) => /^mmproj.*\.gguf$/i.test(f));
  if (found.length > 1) {
    throw new ModelFileError(
      `${dir} holds ${found.length} mmproj files (${found.join(', ')}); name the one that goes with ${basename(model)} (the mmproj option, --mmproj)`,
    );
  }
  return found[0];
}

/** nodeModelSource, or for a .gguf path the GGUF checkpoint (its headers read: this waits for the files). */
export async function openNodeModel(model: string | ModelSource, mmproj?: string): Promise<ModelSource> {
  if (!isGgufPath(model) || /^https?:\/\//.test(model)) return nodeModelSource(model);
  return openGgufCheckpoint(new NodeDirSource(dirname(resolve(model))), { model: basename(model), mmproj: mmprojFor(model, mmproj) });
}
