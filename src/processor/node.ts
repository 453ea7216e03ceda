// Node additions to the processor: the sharp decoder and loading from a directory. Browser code never
// imports this.

import { NodeDirSource } from '../io/model-source-node';
import { decodeImageNode } from './image-decode-node';
import { Idefics3Processor } from './processor';

export { decodeImageNode } from './image-decode-node';

/** Loads the processor of a checkpoint directory (config.json, tokenizer.json, ...) with the sharp decoder. */
export async function loadProcessorFromDirectory(dir: string): Promise<Idefics3Processor> {
  return await Idefics3Processor.load(new NodeDirSource(dir), { decodeImage: decodeImageNode });
}
