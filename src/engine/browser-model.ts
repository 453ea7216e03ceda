// The checkpoint a browser engine's `model` option names, when it is a GGUF pair: a URL of a model .gguf
// (its mmproj: the `mmproj` option, else findMmproj), or picked files among which are one model .gguf and
// one mmproj*.gguf. Anything else is not GGUF
// (undefined): the caller opens it as a Hugging Face checkpoint.

import { ModelFileError } from '../errors';
import { type GgufDownloadProgress, openGgufCheckpoint } from '../families/gguf-checkpoint';
import { FileListSource, type ModelSource, UrlSource } from '../io/model-source';
import type { GgufModelSource } from '../model/weights/gguf/gguf-plan';

/** What a browser engine's `model` may be. */
export type BrowserModelInput = string | URL | File[] | FileList | FileSystemDirectoryHandle | ModelSource;

const isGguf = (name: string) => /\.gguf$/i.test(name);
const isMmproj = (name: string) => /^mmproj.*\.gguf$/i.test(name);
const baseName = (path: string) => path.split('/').pop() ?? path;

/** The mmproj among `names`, by the mmproj*.gguf convention; a named error when there are several. */
function onlyMmproj(names: readonly string[], where: string): string | undefined {
  const found = names.filter(isMmproj);
  if (found.length > 1) {
    throw new ModelFileError(
      `${where} holds ${found.length} mmproj files (${found.join(', ')}); name the one that goes with the model (the mmproj option)`,
    );
  }
  return found[0];
}

/**
 * The mmproj beside a model .gguf at a URL: the folder's only mmproj*.gguf when its file list is known (a
 * Hub folder, or modelFiles), else `mmproj-<model file>` when the server has it (ggml-org's naming:
 * SmolVLM-256M-Instruct-Q8_0.gguf and mmproj-SmolVLM-256M-Instruct-Q8_0.gguf).
 */
async function findMmproj(folder: UrlSource, model: string): Promise<string | undefined> {
  const listed = await folder.knownFiles();
  if (listed) return onlyMmproj(listed, folder.where);
  return (await folder.exists(`mmproj-${model}`)) ? `mmproj-${model}` : undefined;
}

export async function openBrowserGguf(
  model: BrowserModelInput,
  modelFiles: readonly string[] | undefined,
  mmproj: string | undefined,
  onDownload?: GgufDownloadProgress,
): Promise<GgufModelSource | undefined> {
  if (typeof model === 'string' || model instanceof URL) {
    const url = new URL(String(model), globalThis.location?.href);
    if (!isGguf(url.pathname)) return undefined;
    const folder = new UrlSource(new URL('.', url).href, { files: modelFiles });
    const name = baseName(url.pathname);
    return openGgufCheckpoint(
      folder,
      { model: name, mmproj: mmproj !== undefined ? baseName(mmproj) : await findMmproj(folder, name) },
      onDownload,
    );
  }
  const files = typeof FileList !== 'undefined' && model instanceof FileList ? Array.from(model) : Array.isArray(model) ? model : undefined;
  const ggufs = files?.filter((f) => isGguf(f.name)) ?? [];
  if (!files || ggufs.length === 0) return undefined;
  const models = ggufs.filter((f) => !isMmproj(f.name));
  if (models.length !== 1) {
    throw new ModelFileError(
      `pick one model .gguf and its mmproj .gguf; the selection has ${models.length} model files (${models.map((f) => f.name).join(', ') || 'none'})`,
    );
  }
  const picked = new FileListSource(files);
  return openGgufCheckpoint(picked, {
    model: models[0].name,
    mmproj:
      mmproj ??
      onlyMmproj(
        ggufs.map((f) => f.name),
        picked.where,
      ),
  });
}
