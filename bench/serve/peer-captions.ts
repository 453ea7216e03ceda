// The peer for bench:serve's captioning: transformers.js (Idefics3ForConditionalGeneration, onnxruntime-web
// WebGPU EP, fp32) on the ONNX export of the same random weights (bench/onnx-export/, as bench:model),
// loaded once, captioning the same images one after another, greedy, the same max tokens. transformers.js
// has no batching across requests, so one after another is how an app would use it.

import { AutoProcessor, Idefics3ForConditionalGeneration, RawImage } from '@huggingface/transformers';
import { configureEnv } from '../model/model-peer';
import { captionImage, CAPTION_PROMPT } from './serve-inputs';

export async function runPeerCaptions(o: { modelId: string; n: number; maxTokens: number; log: (line: string) => void }) {
  configureEnv();
  const tLoad = performance.now();
  const processor: any = await AutoProcessor.from_pretrained(o.modelId);
  const model: any = await Idefics3ForConditionalGeneration.from_pretrained(o.modelId, { device: 'webgpu', dtype: 'fp32' });
  o.log(`peer: loaded in ${((performance.now() - tLoad) / 1000).toFixed(1)} s`);
  const perImageMs: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < o.n; i++) {
    const t = performance.now();
    const bytes = await captionImage(i);
    const image = await RawImage.fromBlob(new Blob([bytes as BlobPart], { type: 'image/png' }));
    const messages = [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: CAPTION_PROMPT }] }];
    const inputs = await processor(processor.apply_chat_template(messages, { add_generation_prompt: true }), image);
    await model.generate({ ...inputs, max_new_tokens: o.maxTokens, do_sample: false });
    perImageMs.push(performance.now() - t);
    o.log(`peer: caption ${i + 1}/${o.n} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  const wallMs = performance.now() - t0;
  await model.dispose?.();
  return { n: o.n, maxTokens: o.maxTokens, wallMs, perImageMs, loadMs: performance.now() - tLoad - wallMs };
}
