// Node additions to the processor: a directory reader and the sharp decoder. Browser code never imports this.

import { directoryFiles } from './node-files';
import { decodeImageNode } from './image-decode-node';
import { Idefics3Processor } from './processor';

export { directoryFiles } from './node-files';
export { decodeImageNode } from './image-decode-node';

/** Loads the processor of a checkpoint directory (config.json, tokenizer.json, ...) with the sharp decoder. */
export async function loadProcessorFromDirectory(dir: string): Promise<Idefics3Processor> {
  return await Idefics3Processor.load(directoryFiles(dir), { decodeImage: decodeImageNode });
}
