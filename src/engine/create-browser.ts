// createEngine for browsers and workers: WebGPU from navigator.gpu, images decoded by the browser,
// weights from a URL (cached in the Cache API), picked files, or a granted directory.

import { createBrowserGpuContext } from '../gpu/browser';
import { DirectoryHandleSource, FileListSource, UrlSource, type ModelSource } from '../io/model-source';
import { decodeImageBrowser } from '../processor/image-decode';
import { Engine, type EngineOptions } from './engine';

export type BrowserModelInput = string | URL | File[] | FileList | FileSystemDirectoryHandle | ModelSource;

export function browserModelSource(model: BrowserModelInput): ModelSource {
  if (typeof model === 'string' || model instanceof URL) return new UrlSource(String(model));
  if (typeof FileList !== 'undefined' && model instanceof FileList) return new FileListSource(Array.from(model));
  if (Array.isArray(model)) return new FileListSource(model);
  if ((model as FileSystemDirectoryHandle).kind === 'directory') return new DirectoryHandleSource(model as FileSystemDirectoryHandle);
  return model as ModelSource;
}

export async function createEngine(options: EngineOptions & { model: BrowserModelInput }): Promise<Engine> {
  const gpu = await createBrowserGpuContext();
  try {
    return await Engine.create({ gpu, source: browserModelSource(options.model), decodeImage: decodeImageBrowser, ownsGpu: true }, options);
  } catch (e) {
    gpu.destroy();
    throw e;
  }
}
