// What a model family implements (docs/families.md): the config.json model_type values it reads, its
// config sections parsed into the shared ModelConfig (towers, decoder, tensor names), and its processor
// (tokenizer, chat template, media preprocessing). The engine, the loaders and the encoder know a
// checkpoint's family only through this interface and the ModelConfig it returns.

import type { ModelConfig } from '../model/config';
import type { GgufHeader } from '../model/weights/gguf/gguf-format';
import type { GgufTensorRef } from '../model/weights/gguf/gguf-plan';
import type { Json } from '../model/config-fields';
import type { ModelFiles } from '../processor/files';
import type { ImageDecoder } from '../processor/image-decode';
import type { Idefics3Processor } from '../processor/processor';
import type { QwenProcessor } from '../processor/qwen-processor';
import type { VoxtralProcessor } from '../processor/voxtral-processor';

/** The processors the families have: each prepares its own media kinds (the engine asks it which). */
export type FamilyProcessor = Idefics3Processor | VoxtralProcessor | QwenProcessor;

interface ProcessorDeps {
  /** Bytes → pixels in this runtime (a family without images ignores it). */
  decodeImage: ImageDecoder;
}

export interface ModelFamily {
  /** The family's name, as ModelConfig.family carries it. */
  readonly id: string;
  /** config.json model_type values this family reads. */
  readonly modelTypes: readonly string[];
  /** Its architecture in a few words, for the error that lists what Tessera runs. */
  readonly architecture: string;
  /** config.json (model_type already checked) → the runtime's config; named errors for what is not run. */
  parseConfig(config: Json): ModelConfig;
  /** The tokenizer, chat template and media preprocessing of a checkpoint of this family. */
  loadProcessor(files: ModelFiles, config: ModelConfig, deps: ProcessorDeps): Promise<FamilyProcessor>;
  /** How it reads a GGUF checkpoint (llama.cpp's model .gguf + mmproj .gguf), where it can. */
  readonly gguf?: GgufFamily;
}

/**
 * A family's reading of GGUF files: which pairs are its own, the Hugging Face files their metadata stands
 * for (the tokenizer's are the same for every family: processor/gguf-tokenizer.ts), and which HF tensor
 * each GGUF tensor is. The rest of the engine then sees an HF checkpoint.
 */
export interface GgufFamily {
  /** Whether the pair is this family's (the model file's general.architecture, the mmproj's clip.projector_type). */
  reads(model: GgufHeader, mmproj: GgufHeader | undefined): boolean;
  /** config.json, preprocessor_config.json and the like, as objects. */
  files(model: GgufHeader, mmproj: GgufHeader | undefined, where: string): Record<string, Json>;
  /** The HF tensor a GGUF tensor of the model ('model') or mmproj file is; undefined for one the family does not use. */
  tensor(file: 'model' | 'mmproj', ggufName: string, headers: { model: GgufHeader; mmproj?: GgufHeader }): GgufTensorRef | undefined;
}
