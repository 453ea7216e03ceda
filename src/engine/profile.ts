// engine.profile(): GPU time per kernel kind for one vision tile, one prefill chunk and one decode step of
// a request, every dispatch timed on its own (kernels/dispatch-timer.ts), grouped by profile-report.ts.
//
//   vision tile    the image's first tile through the vision tower and connector (a batch of one). The
//                  tower's weights are loaded onto the engine's device for the profile and dropped after:
//                  the engine's encoder may be a worker with a device of its own.
//   prefill chunk  the prompt's first min(promptTokens, maxTokensPerStep) tokens as one step of a scratch
//                  sequence; its image rows take the profiled tile's embeddings, repeated for every tile
//                  (a kernel's time does not depend on the values).
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
import type { Idefics3Processor } from '../processor/processor';
import type { ImagePlaceholder } from '../processor/prompt';
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
  processor: Idefics3Processor;
  mediaPolicy: MediaPolicy;
  /** The vision tower and connector on `gpu`, in the engine's dtype (destroyed by the caller's profile). */
  loadVision(): Promise<LoadedEncoderModel>;
}

/** Rows of an image's embeddings for a profile: one tile's rows ([seqLen, hidden]) repeated for every tile. */
function repeatTile(tile: Float32Array, placeholder: ImagePlaceholder, hidden: number): Float32Array {
  const out = new Float32Array(placeholder.length * hidden);
  for (let o = 0; o < out.length; o += tile.length) out.set(tile.subarray(0, Math.min(tile.length, out.length - o)), o);
  return out;
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
  const prepared = await processor.prepare(messages);
  const phases: ProfilePhase[] = [];
  const decodeAtPositions: DecodeAtPosition[] = [];
  const notes: string[] = [];
  // One timer for the three phases (one timestamp quantum); each phase is the slice of timings it added.
  const timer = runner.createTimer(options.timing);
  const timed = async (run: () => Promise<unknown>) => {
    const first = timer.timings.length;
    await run();
    return timer.timings.slice(first);
  };

  // Vision: the first tile, untimed and then timed; its embeddings stand in for every tile's below.
  let tile: Float32Array | undefined;
  const image = prepared.images[0];
  if (image) {
    const loaded = await deps.loadVision();
    const vm = { vision: loaded.vision!, destroy: () => loaded.destroy() };
    try {
      const tileElems = image.pixelValues.length / image.layout.numTiles;
      const input = { pixels: image.pixelValues.subarray(0, tileElems), numTiles: 1 };
      gpu.release((await vm.vision.encode(input)).embeddings);
      const timings = await timed(async () => {
        const out = await vm.vision.encode(input, { timer });
        try {
          tile = (await gpu.readF32(out.embeddings)).slice();
        } finally {
          gpu.release(out.embeddings);
        }
      });
      phases.push(
        summarizePhase(
          'vision-tile',
          `1 of the image's ${image.layout.numTiles} tile(s): ${vm.vision.patchesPerTile} patches -> ${vm.vision.vision.imageSeqLen} embeddings`,
          timings,
        ),
      );
      notes.push(
        "vision tile: the vision tower was loaded onto the engine's device for this profile (and dropped after); the engine's encoder keeps its own copy",
      );
    } finally {
      vm.destroy();
    }
  }

  // Prefill chunk and decode step on a scratch sequence.
  const ids = prepared.plan.tokenIds;
  const T = Math.min(ids.length, runner.limits.maxTokensPerStep);
  const contextWindow = runner.limits.contextWindow;
  await runner.withScratchSequence(T + 1, async (seqId) => {
    const media = prepared.plan.placeholders.map((p) => ({
      placeholder: p,
      data: tile ? repeatTile(tile, p, hidden) : new Float32Array(p.length * hidden),
    }));
    const greedy = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };
    const seq = (start: number, tokenIds: Uint32Array, last: boolean, segments?: MediaRows[]): RunnerSeq[] => [
      { seqId, tokenIds, start, sample: last ? greedy : undefined, media: segments },
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
  if (image)
    notes.push("prefill chunk: image rows take the profiled tile's embeddings for every tile (kernel time does not depend on the values)");
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
