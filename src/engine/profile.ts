// engine.profile(): GPU time per kernel kind for the image's vision pass, one prefill chunk and one decode
// step of a request, every dispatch timed on its own (kernels/dispatch-timer.ts), grouped by profile-report.ts.
//
//   vision tile    Idefics3: the image's first tile through the vision tower and connector (a batch of one).
//   vision image   Qwen-VL: the whole image's pass (its patch grid after the smart resize; no tiles), with
//                  Qwen3-VL's DeepStack levels. Either way the tower's weights are loaded onto the engine's
//                  device for the profile and dropped after: the engine's encoder may be a worker with a
//                  device of its own.
//   prefill chunk  the prompt's first min(promptTokens, maxTokensPerStep) tokens as one step of a scratch
//                  sequence (Qwen-VL: with the prompt's M-RoPE positions); its image rows are the profiled
//                  pass's (Idefics3: the profiled tile's, repeated for every tile; a kernel's time does not
//                  depend on the values).
//   decode step    one greedy token right after that chunk; and, with decodePositions, one at each of those
//                  positions (the scratch sequence's blocks grow to reach it), also as whole-step wall time.
//
// Each phase runs once untimed and then once timed, so first-use costs (pipeline compiles for a new row
// bucket, first touches of buffers) stay out of the table. The scratch sequence's KV blocks are freed after
// (docs/design.md invariant 7); nothing enters the prefix cache or the encoder cache (the scratch blocks take a cached
// prefix block only when no uncached block is free, as any sequence's would). The engine runs this only while no
// request is in flight (engine.ts), since a step's buffers are shared.

import { InvalidRequestError, KvCacheFullError } from '../errors';
import type { ChatMessage } from '../processor/messages';
import type { GpuContext } from '../gpu/context';
import { adapterName } from '../gpu/adapter-info';
import type { MediaRows, RunnerSeq } from '../model/runner/model-runner';
import type { LoadedEncoderModel, LoadedModel } from '../model/load';
import { describeDtype, modelParts } from '../model/weights/dtype';
import type { DispatchTimer, DispatchTiming } from '../kernels/dispatch-timer';
import type { ImageDecoder } from '../processor/image-decode';
import { mropeChunk } from '../processor/mrope-positions';
import type { Idefics3Processor } from '../processor/processor';
import type { ImagePlaceholder, PromptPlan } from '../processor/prompt';
import { processQwenImage } from '../processor/qwen-image-processor';
import { QwenProcessor } from '../processor/qwen-processor';
import { imagePayloads, type RequestMessage } from './intake/given-embeddings';
import { chunkMediaRows } from './media-rows';
import type { MediaPolicy } from './intake/media-options';
import { toProcessorMessages } from './intake/message-images';
import { summarizePhase } from './profile-report';
import type { ChatContentPart, DecodeAtPosition, ProfileOptions, ProfilePhase, ProfileReport } from './types';

/** Whole decode steps timed per position of ProfileOptions.decodePositions (the median is reported). */
const DECODE_POSITION_RUNS = 5;

const DEFAULT_PROFILE_PROMPT = 'Can you describe this image?';

export interface ProfileDeps {
  gpu: GpuContext;
  model: Pick<LoadedModel, 'runner' | 'config' | 'weights'>;
  processor: Idefics3Processor | QwenProcessor;
  mediaPolicy: MediaPolicy;
  /** The engine's image decoder (a Qwen-VL image is resized from the whole decoded image, as its encoder does). */
  decodeImage: ImageDecoder;
  /** The vision tower and connector on `gpu`, in the engine's dtype (destroyed by the caller's profile). */
  loadVision(): Promise<LoadedEncoderModel>;
}

/** Runs `run` and returns the dispatch timings it added to the profile's timer. */
type Timed = (run: () => Promise<unknown>) => Promise<DispatchTiming[]>;

/** The image's vision phase, and the embedding rows each placeholder of the prompt then splices. */
interface VisionProfile {
  phase: ProfilePhase;
  notes: string[];
  /** [placeholder.length × (1 + DeepStack levels), hidden]: what the prefill chunk splices for it. */
  rowsFor(placeholder: ImagePlaceholder): Float32Array;
}

/** What a family gives the profile: the prompt's plan, and with an image, how to run its vision phase. */
interface ProfileSubject {
  plan: PromptPlan;
  vision?: (timed: Timed, timer: DispatchTimer) => Promise<VisionProfile>;
}

/** Rows of an image's embeddings for a profile: one tile's rows ([seqLen, hidden]) repeated for every tile. */
function repeatTile(tile: Float32Array, placeholder: ImagePlaceholder, hidden: number): Float32Array {
  const out = new Float32Array(placeholder.length * hidden);
  for (let o = 0; o < out.length; o += tile.length) out.set(tile.subarray(0, Math.min(tile.length, out.length - o)), o);
  return out;
}

/** Idefics3: the image's first tile through the tower and connector; its rows stand in for every tile's. */
async function idefics3Subject(deps: ProfileDeps, processor: Idefics3Processor, messages: ChatMessage[]): Promise<ProfileSubject> {
  const prepared = await processor.prepare(messages);
  const image = prepared.images[0];
  const hidden = deps.model.config.text.hiddenSize;
  return {
    plan: prepared.plan,
    vision: image
      ? async (timed, timer) => {
          const loaded = await deps.loadVision();
          try {
            const vision = loaded.vision!;
            const tileElems = image.pixelValues.length / image.layout.numTiles;
            const input = { pixels: image.pixelValues.subarray(0, tileElems), numTiles: 1 };
            deps.gpu.release((await vision.encode(input)).embeddings);
            let tile = new Float32Array(0);
            const timings = await timed(async () => {
              const out = await vision.encode(input, { timer });
              try {
                tile = (await deps.gpu.readF32(out.embeddings)).slice();
              } finally {
                deps.gpu.release(out.embeddings);
              }
            });
            return {
              phase: summarizePhase(
                'vision-tile',
                `1 of the image's ${image.layout.numTiles} tile(s): ${vision.patchesPerTile} patches -> ${vision.vision.imageSeqLen} embeddings`,
                timings,
              ),
              notes: [
                "vision tile: the vision tower was loaded onto the engine's device for this profile (and dropped after); the engine's encoder keeps its own copy",
                "prefill chunk: image rows take the profiled tile's embeddings for every tile (kernel time does not depend on the values)",
              ],
              rowsFor: (p) => repeatTile(tile, p, hidden),
            };
          } finally {
            loaded.destroy();
          }
        }
      : undefined,
  };
}

/** Qwen-VL: the image's whole pass (its patch grid after the smart resize: a Qwen-VL image has no tiles). */
async function qwenSubject(deps: ProfileDeps, processor: QwenProcessor, messages: ChatMessage[]): Promise<ProfileSubject> {
  const bytes = imagePayloads(messages as RequestMessage[])[0] as Uint8Array | undefined;
  const image = bytes ? processQwenImage(await deps.decodeImage(bytes), processor.image) : undefined;
  const plan = processor.planPrompt(messages, image ? [image.grid] : []);
  return {
    plan,
    vision: image
      ? async (timed, timer) => {
          const loaded = await deps.loadVision();
          try {
            const tower = loaded.qwenVision!;
            await tower.encode(image.patches, image.grid);
            let rows = new Float32Array(0);
            const timings = await timed(async () => {
              const out = await tower.encode(image.patches, image.grid, { timer });
              rows = new Float32Array(out.embeddings.length * (1 + out.deepstack.length));
              for (const [i, level] of [out.embeddings, ...out.deepstack].entries()) rows.set(level, i * out.embeddings.length);
            });
            const { t, h, w } = image.grid;
            return {
              phase: summarizePhase(
                'vision-image',
                `the whole image: grid ${t} x ${h} x ${w} (${image.resized[1]} x ${image.resized[0]} px after the smart resize), ${t * h * w} patches -> ${image.tokens} embeddings`,
                timings,
              ),
              notes: [
                "vision image: the vision tower was loaded onto the engine's device for this profile (and dropped after); the engine's encoder keeps its own copy",
              ],
              rowsFor: () => rows,
            };
          } finally {
            loaded.destroy();
          }
        }
      : undefined,
  };
}

export async function profileModel(deps: ProfileDeps, options: ProfileOptions = {}): Promise<ProfileReport> {
  const { gpu, model, processor } = deps;
  const { runner, config } = model;
  const { kv } = runner;
  const hidden = config.text.hiddenSize;
  const content: ChatContentPart[] = [];
  if (typeof options.image === 'string') content.push({ type: 'image_url', image_url: { url: options.image } });
  else if (options.image !== undefined) content.push({ type: 'image', image: options.image });
  content.push({ type: 'text', text: options.prompt ?? DEFAULT_PROFILE_PROMPT });
  // The content is an image (or its URL) and text, never image_embeds: the messages hold encoded images.
  const messages = (await toProcessorMessages([{ role: 'user', content }], deps.mediaPolicy)) as ChatMessage[];
  const subject =
    processor instanceof QwenProcessor ? await qwenSubject(deps, processor, messages) : await idefics3Subject(deps, processor, messages);
  const { plan } = subject;
  const phases: ProfilePhase[] = [];
  const decodeAtPositions: DecodeAtPosition[] = [];
  const notes: string[] = [];
  // One timer for the three phases (one timestamp quantum); each phase is the slice of timings it added.
  const timer = runner.createTimer(options.timing);
  const timed: Timed = async (run) => {
    const first = timer.timings.length;
    await run();
    return timer.timings.slice(first);
  };

  // Vision, untimed and then timed.
  const vision = subject.vision ? await subject.vision(timed, timer) : undefined;
  if (vision) {
    phases.push(vision.phase);
    notes.push(vision.notes[0]!);
  }

  // Prefill chunk and decode step on a scratch sequence.
  const ids = plan.tokenIds;
  /** M-RoPE positions of n tokens from `start` (Qwen-VL), past the prompt too. */
  const rope = (start: number, n: number) => (plan.mrope ? { ropePositions: mropeChunk(plan.mrope, start, n) } : {});
  const T = Math.min(ids.length, runner.limits.maxTokensPerStep);
  const contextWindow = runner.limits.contextWindow;
  await runner.withScratchSequence(T + 1, async (seqId) => {
    const media = plan.placeholders.map((p) => ({
      placeholder: p,
      data: vision ? vision.rowsFor(p) : new Float32Array(p.length * hidden),
    }));
    const greedy = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };
    const seq = (start: number, tokenIds: Uint32Array, last: boolean, segments?: MediaRows[]): RunnerSeq[] => [
      { seqId, tokenIds, start, ...rope(start, tokenIds.length), sample: last ? greedy : undefined, media: segments },
    ];
    const segments = chunkMediaRows(media, 0, T, hidden);
    const prefill = seq(0, ids.slice(0, T), T === ids.length, segments);
    await runner.run(prefill);
    let sampled: number | null = 0;
    const prefillTimings = await timed(async () => (sampled = (await runner.run(prefill, { timer })).tokens[0] ?? null));
    const spliced = segments.reduce((a, m) => a + m.data.length / hidden, 0);
    phases.push(
      summarizePhase(
        'prefill-chunk',
        `${T} of the prompt's ${ids.length} tokens (${runner.lastStep.numPaddedTokens} rows after padding to the step bucket), ${spliced} image rows spliced` +
          (plan.mrope ? ', M-RoPE positions' : '') +
          (T === ids.length ? ', greedy head on the last row' : ''),
        prefillTimings,
      ),
    );
    // The sampled id, or the next prompt token (non-finite logits give no token: any id will do).
    const next = T < ids.length ? ids[T] : (sampled ?? 0);
    const decode = seq(T, Uint32Array.of(next), true);
    await runner.run(decode);
    const decodeTimings = await timed(() => runner.run(decode, { timer }));
    phases.push(summarizePhase('decode-step', `1 token at position ${T}, greedy head over ${config.text.vocabSize} logits`, decodeTimings));
    for (const position of options.decodePositions ?? []) {
      if (!Number.isInteger(position) || position < 1 || position >= contextWindow) {
        throw new InvalidRequestError(
          'profile option decodePositions',
          position,
          `each must be an integer from 1 to ${contextWindow - 1} (the context limit).`,
        );
      }
      if (!kv.allocate(seqId, position + 1))
        throw new KvCacheFullError(kv.blocksNeeded(seqId, position + 1), kv.pool.numFree, kv.blockSize);
      const at = seq(position, Uint32Array.of(next), true);
      await runner.run(at);
      const runsMs: number[] = [];
      for (let i = 0; i < DECODE_POSITION_RUNS; i++) {
        const t0 = performance.now();
        await runner.run(at);
        runsMs.push(performance.now() - t0);
      }
      decodeAtPositions.push({ position, stepMs: [...runsMs].sort((a, b) => a - b)[Math.floor(runsMs.length / 2)], runsMs });
      phases.push(
        summarizePhase('decode-step', `1 token at position ${position} (decodePositions)`, await timed(() => runner.run(at, { timer }))),
      );
    }
  });
  if (vision) notes.push(...vision.notes.slice(1));
  notes.push('each phase ran once untimed before the timed run (pipeline compiles and first buffer touches are not in the table)');
  notes.push('GB/s counts each operand read once and each result written once: a lower bound on the traffic');
  const quantum = timer.timestampQuantumNs;
  return {
    timing: timer.method,
    ...(quantum !== undefined && quantum >= 1000 ? { timestampQuantumNs: quantum } : {}),
    adapter: adapterName(gpu.adapter),
    kernelVariant: gpu.kernelVariant,
    dtype: describeDtype(model.weights.dtype, modelParts(model.config)),
    phases,
    ...(options.decodePositions ? { decodeAtPositions } : {}),
    notes,
  };
}
