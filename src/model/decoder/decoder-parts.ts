// What a decoder layer's or head's dispatches are built from: the device, the weights, the text config, the
// KV buffers, the language model's tensors and its flags (layer-separate.ts, layer-fused.ts).

import type { GpuContext } from '../../gpu/context';
import type { Dispatch } from '../../kernels/dispatch';
import type { TextConfig } from '../config';
import type { KvCacheBuffers } from '../kv-cache';
import type { ModelWeights } from '../weights';
import type { DecoderTensors } from './decoder-tensors';
import type { StepFlags } from './step-flags';

export interface DecoderParts {
  gpu: GpuContext;
  weights: ModelWeights;
  c: TextConfig;
  kv: KvCacheBuffers;
  tensors: DecoderTensors;
  flags: StepFlags;
}

/** One layer's dispatches for a step of T rows, in order. */
export interface LayerSteps {
  steps: Array<Promise<Dispatch>>;
  /** Which of `steps` reads the keys (its work depends on each step's positions). */
  attentionAt: number;
  /** The tensor holding h after the layer (the DeepStack adds go there). */
  hOut: string;
}
