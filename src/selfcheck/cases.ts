// One check per kernel call: seeded random inputs, the kernel on the GPU, its float64 reference on the
// CPU, and the tolerance they must agree to. `doctor`, the browser self-check and the GPU tests all run
// these same cases (tests at many more shapes and workgroup sizes).

import type { GpuContext } from '../gpu/context';
import type { Activation } from '../kernels/activations';
import { argmaxReference, prepareArgmax, type ArgmaxShape } from '../kernels/argmax';
import { bilinearRowsReference, prepareBilinearRows, type BilinearRowsShape } from '../kernels/bilinear-rows';
import { copyReference, prepareCopy } from '../kernels/copy';
import { floatToHalf, halfToFloat } from '../kernels/f16';
import { embeddingGatherReference, prepareEmbeddingGather, type EmbeddingGatherShape } from '../kernels/embedding-gather';
import { geluTanhReference, prepareGeluTanh } from '../kernels/gelu-tanh';
import { layerNormReference, prepareLayerNorm, type LayerNormPlan, type LayerNormShape } from '../kernels/layer-norm';
import { matmulReference, prepareMatmul, type MatmulPlan, type MatmulShape } from '../kernels/matmul';
import { patchEmbedNumPatches, patchEmbedReference, preparePatchEmbed, type PatchEmbedShape } from '../kernels/patch-embed';
import { conv1dOutputLength, conv1dReference, prepareConv1d, type Conv1dShape } from '../kernels/conv1d';
import { pixelShuffleOutputShape, pixelShuffleReference, preparePixelShuffle, type PixelShuffleShape } from '../kernels/pixel-shuffle';
import { residualAddReference, prepareResidualAdd } from '../kernels/residual-add';
import { rmsNormReference, prepareRmsNorm, type RmsNormShape } from '../kernels/rms-norm';
import { prepareQkNorm, qkNormReference, type QkNormShape } from '../kernels/qk-norm';
import { prepareRope, ropeReference, type RopeShape } from '../kernels/rope';
import { ropeCosSinTable } from '../kernels/rope-tables';
import { prepareSoftmax, softmaxReference, type SoftmaxShape } from '../kernels/softmax';
import { prepareSwiglu, swigluReference, type SwigluShape } from '../kernels/swiglu';
import type { HeadCode } from '../kernels/attention-head';
import { prepareVitAttention, vitAttentionReference, type VitAttentionPlan, type VitAttentionShape } from '../kernels/vit-attention';
import { dequantizeReference, quantizeReference, type WeightFormat } from '../kernels/weight-format';
import { EXACT, F32_TOLERANCE, type Tolerance } from './compare';
import { concat, runDispatch, runDispatches, withScratch, type Scratch } from './harness';
import { randomInts, randomUniform } from './random';

interface CaseOutput {
  got: ArrayLike<number>;
  want: ArrayLike<number>;
  /** Wall time from submit to completion of the kernel's dispatch(es). */
  gpuMs: number;
  /** The dispatch's label: which variant or plan actually ran (e.g. matmul:register-wide). */
  ranAs: string;
}

export interface KernelCase {
  /** Kernel base name (the .wgsl / .ts name). */
  kernel: string;
  /** Every shader file (base name) the case runs and checks through its output, when more than `kernel`. */
  shaders?: readonly string[];
  /** Kernel, shape and options: names the case in every report. */
  label: string;
  tolerance: Tolerance;
  execute(gpu: GpuContext): Promise<CaseOutput>;
}

export interface CommonOptions {
  workgroupSize?: number;
  seed?: number;
}

export function wgLabel(o: CommonOptions): string {
  return o.workgroupSize ? ` WG=${o.workgroupSize}` : '';
}

// ---------------------------------------------------------------------------------------------- matmul

export interface MatmulCaseOptions extends CommonOptions {
  bias?: boolean;
  activation?: Activation;
  plan?: MatmulPlan;
  /** Weight storage format (default f32); packed weights come from quantizeReference(). */
  format?: WeightFormat;
  /** gemv: force the subgroup or the workgroup-memory reduction. */
  subgroups?: boolean;
  /** y starts with random values and the kernel adds its result to them (the residual epilogue). */
  accumulate?: boolean;
  /** f16 weights multiplied in f16 (lib/weights-f16-math.wgsl; the device needs `shader-f16`). */
  f16Math?: boolean;
  /**
   * W split in this many parts of rows (a weight larger than one binding), one matmul each writing its
   * columns of y (MatmulOptions.yColumns).
   */
  parts?: number;
  /**
   * W in parts of rows of these formats, one each (a GGUF qkv whose v is of another block type than q and k:
   * weights/row-split.ts), with one bias whose parts are views at their offsets, as the decoder binds them.
   * Overrides format and parts.
   */
  partFormats?: readonly WeightFormat[];
}

/** [first, rows] of `n` rows cut in `parts` nearly equal parts (the last may be shorter). */
function rowParts(n: number, parts: number): Array<[number, number]> {
  const size = Math.ceil(n / parts);
  const out: Array<[number, number]> = [];
  for (let first = 0; first < n; first += size) out.push([first, Math.min(size, n - first)]);
  return out;
}

/** Host copy of what a packed weight holds, dequantized as the kernels do (f32: the values themselves). */
export function asStored(format: WeightFormat, w: Float32Array, N: number, K: number): Float32Array {
  return format === 'f32' ? w : dequantizeReference(format, quantizeReference(format, w, N, K), N, K);
}

/**
 * Tolerance: atol grows with sqrt(K/3), the RMS of an output for inputs uniform in [-1, 1], because
 * f32 accumulation error grows with the size of the partial sums; rtol is the f32 default. Packed weights
 * are compared against the float64 product with their dequantized values, so the same tolerance holds:
 * the kernels' dequantization is exact math (one f32 multiply-add per value).
 */
export function matmulCase(shape: MatmulShape, o: MatmulCaseOptions = {}): KernelCase {
  const { M, N, K } = shape;
  const seed = o.seed ?? 1;
  const act = o.activation ?? 'none';
  const format = o.format ?? 'f32';
  const sub = o.subgroups === undefined ? '' : o.subgroups ? ' subgroups' : ' no-subgroups';
  const numParts = o.partFormats?.length ?? o.parts ?? 1;
  const formatLabel = o.partFormats ? ` ${o.partFormats.join('|')}` : format !== 'f32' ? ` ${format}` : '';
  return {
    // The gemv plan is its own shader (gemv.wgsl): the report names it so every shader is seen to run.
    kernel: o.plan === 'gemv' ? 'gemv' : 'matmul',
    label: `matmul M=${M} N=${N} K=${K}${o.bias ? ' +bias' : ''}${act !== 'none' ? ` ${act}` : ''}${o.plan ? ` ${o.plan}` : ''}${formatLabel}${o.f16Math ? ' f16-math' : ''}${o.accumulate ? ' +=' : ''}${numParts > 1 ? ` in ${numParts} parts of rows` : ''}${sub}${wgLabel(o)}`,
    tolerance: o.f16Math ? F16_MATH_TOLERANCE(K) : { atol: 1e-5 * Math.max(1, Math.sqrt(K / 3)), rtol: 1e-4 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(M * K, seed);
        const w = randomUniform(N * K, seed + 1);
        const b = o.bias ? randomUniform(N, seed + 2) : undefined;
        const residual = o.accumulate ? randomUniform(M * N, seed + 3) : undefined;
        if (o.f16Math && format !== 'f16') throw new Error(`f16Math needs f16 weights, not ${format}`);
        const x_ = s.upload(x, [M, K], 'x');
        const y = residual ? s.upload(residual, [M, N], 'y') : s.zeros([M, N], 'f32', 'y');
        const options = { activation: act, plan: o.plan, workgroupSize: o.workgroupSize, subgroups: o.subgroups, accumulate: o.accumulate };
        const split = rowParts(N, numParts);
        const formats = o.partFormats ?? split.map(() => format);
        const wholeBias = b && o.partFormats ? s.upload(b, [N], 'bias') : undefined;
        const biasOf = (first: number, rows: number) =>
          wholeBias
            ? { ...wholeBias, shape: [rows], offsetBytes: wholeBias.offsetBytes + first * 4 }
            : b
              ? s.upload(b.subarray(first, first + rows), [rows], 'bias')
              : undefined;
        const ds = await Promise.all(
          split.map(([first, rows], i) => {
            const weight = s.weight(formats[i], w.subarray(first * K, (first + rows) * K), rows, K, `weight[${first}:]`);
            const io = {
              x: x_,
              weight: o.f16Math && 'format' in weight ? { ...weight, f16Math: true } : weight,
              bias: biasOf(first, rows),
              y,
            };
            const yColumns = split.length > 1 ? { offset: first, stride: N } : undefined;
            return prepareMatmul(gpu, io, { M, N: rows, K }, { ...options, yColumns });
          }),
        );
        const r = await runDispatches(gpu, ds, async () => [await gpu.readF32(y)]);
        const xAsRead = o.f16Math ? x.map((v) => halfToFloat(floatToHalf(v))) : x;
        const stored = new Float32Array(N * K);
        for (const [i, [first, rows]] of split.entries()) {
          stored.set(asStored(formats[i], w.subarray(first * K, (first + rows) * K), rows, K), first * K);
        }
        return { ...r, want: matmulReference(xAsRead, stored, b, shape, act, residual) };
      }),
  };
}

/**
 * f16 math rounds x to f16 (the reference does too) and sums products in f16 (four at a time, or a weight
 * group of 32 pairwise in the decode kernels) before the f32 accumulation. Each f16 sum carries ~2^-11 of
 * its size, so the error grows like sqrt(K) times that: about 5e-3 rms at K = 576 for inputs in [-1, 1).
 * 2e-3 * sqrt(K) leaves 2.5x room over the largest of 1536 outputs, and a wrong index is still off by the
 * output's own size (~sqrt(K / 9), 8 at K = 576). Not yet run on a device with shader-f16 (docs/gpu.md).
 */
const F16_MATH_TOLERANCE = (K: number) => ({ atol: 2e-3 * Math.sqrt(K), rtol: 1e-3 });

/**
 * A batched decode step's rows against the same rows run one at a time: the register-narrow plan shares
 * each load of W between up to 4 rows (main_narrow_rows), and every row must come out bit-identical to
 * the one-row kernel (main_narrow), so a request's tokens never depend on which others share its step.
 */
export function matmulRowsCase(
  shape: MatmulShape,
  o: { format?: WeightFormat; bias?: boolean; activation?: Activation; seed?: number } = {},
): KernelCase {
  const { M, N, K } = shape;
  const seed = o.seed ?? 5;
  const format = o.format ?? 'f32';
  const act = o.activation ?? 'none';
  return {
    kernel: 'matmul',
    label: `matmul rows M=${M} N=${N} K=${K} register-narrow${format !== 'f32' ? ` ${format}` : ''}${act !== 'none' ? ` ${act}` : ''}: each row = that row alone`,
    tolerance: EXACT,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(M * K, seed);
        const w = s.weight(format, randomUniform(N * K, seed + 1), N, K, 'weight');
        const bias = o.bias ? s.upload(randomUniform(N, seed + 2), [N], 'bias') : undefined;
        const run = async (rows: Float32Array, m: number) => {
          const io = { x: s.upload(rows, [m, K], 'x'), weight: w, bias, y: s.zeros([m, N], 'f32', 'y') };
          const d = await prepareMatmul(gpu, io, { M: m, N, K }, { activation: act, plan: 'register-narrow' });
          return { ...(await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)])), M: m };
        };
        const batched = await run(x, M);
        const alone: ArrayLike<number>[] = [];
        for (let r = 0; r < M; r++) alone.push((await run(x.slice(r * K, (r + 1) * K), 1)).got);
        return { got: batched.got, want: concat(...alone), gpuMs: batched.gpuMs, ranAs: batched.ranAs };
      }),
  };
}

// ----------------------------------------------------------------------------------------- norms

export function layerNormCase(shape: LayerNormShape, o: CommonOptions & { offset?: number; plan?: LayerNormPlan } = {}): KernelCase {
  const { rows, dim } = shape;
  const seed = o.seed ?? 2;
  const offset = o.offset ?? 0;
  return {
    kernel: 'layer-norm',
    // A forced plan names its shader; the device's choice runs whichever it picks (the label says).
    shaders: o.plan === 'rows' ? ['layer-norm-rows'] : undefined,
    label: `layer-norm rows=${rows} dim=${dim}${offset ? ` offset=${offset}` : ''}${o.plan ? ` ${o.plan}` : ''}${wgLabel(o)}`,
    // An offset adds f32 cancellation in x - mean of about |offset| * 2^-24 * sqrt(dim).
    tolerance: { atol: 1e-5 + Math.abs(offset) * 2e-6, rtol: 1e-4 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(rows * dim, seed).map((v) => v + offset);
        const w = randomUniform(dim, seed + 1, 0.5, 1.5);
        const b = randomUniform(dim, seed + 2);
        const io = {
          x: s.upload(x, [rows, dim], 'x'),
          weight: s.upload(w, [dim], 'weight'),
          bias: s.upload(b, [dim], 'bias'),
          y: s.zeros([rows, dim], 'f32', 'y'),
        };
        const d = await prepareLayerNorm(gpu, io, shape, { eps: 1e-6, workgroupSize: o.workgroupSize, plan: o.plan });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)]);
        return { ...r, want: layerNormReference(x, w, b, shape, 1e-6) };
      }),
  };
}

export function rmsNormCase(shape: RmsNormShape, o: CommonOptions = {}): KernelCase {
  const { rows, dim } = shape;
  const seed = o.seed ?? 3;
  return {
    kernel: 'rms-norm',
    label: `rms-norm rows=${rows} dim=${dim}${wgLabel(o)}`,
    tolerance: F32_TOLERANCE,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(rows * dim, seed, -3, 3);
        const w = randomUniform(dim, seed + 1, 0.5, 1.5);
        const io = { x: s.upload(x, [rows, dim], 'x'), weight: s.upload(w, [dim], 'weight'), y: s.zeros([rows, dim], 'f32', 'y') };
        const d = await prepareRmsNorm(gpu, io, shape, { eps: 1e-5, workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)]);
        return { ...r, want: rmsNormReference(x, w, shape, 1e-5) };
      }),
  };
}

/** q and k heads of fused q|k|v rows normed in place; the v heads must come back unchanged. */
export function qkNormCase(shape: QkNormShape, o: CommonOptions = {}): KernelCase {
  const { numTokens, numHeads, numQHeads, numKHeads, headDim } = shape;
  const seed = o.seed ?? 3;
  return {
    kernel: 'qk-norm',
    label: `qk-norm tokens=${numTokens} heads=${numQHeads}q+${numKHeads}k of ${numHeads} headDim=${headDim}${wgLabel(o)}`,
    tolerance: F32_TOLERANCE,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(numTokens * numHeads * headDim, seed, -3, 3);
        const w = randomUniform(2 * headDim, seed + 1, 0.5, 1.5);
        const io = { x: s.upload(x, [numTokens, numHeads, headDim], 'x'), weight: s.upload(w, [2, headDim], 'weight') };
        const d = await prepareQkNorm(gpu, io, shape, { eps: 1e-6, workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.x)]);
        return { ...r, want: qkNormReference(x, w, shape, 1e-6) };
      }),
  };
}

/** Learned-position rows resampled bilinearly (Qwen3-VL): four corners per row, weights summing to 1, added to out. */
export function bilinearRowsCase(shape: BilinearRowsShape, o: CommonOptions = {}): KernelCase {
  const { rows, dim, tableRows } = shape;
  const seed = o.seed ?? 5;
  return {
    kernel: 'bilinear-rows',
    label: `bilinear-rows rows=${rows} dim=${dim} table=${tableRows}${wgLabel(o)}`,
    tolerance: F32_TOLERANCE,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const table = randomUniform(tableRows * dim, seed, -1, 1);
        const out = randomUniform(rows * dim, seed + 1, -1, 1);
        const idx = randomInts(4 * rows, seed + 2, tableRows);
        const w = randomUniform(4 * rows, seed + 3, 0, 0.5);
        const io = {
          table: s.upload(table, [tableRows, dim], 'table'),
          idx: s.upload(idx, [4, rows], 'idx'),
          w: s.upload(w, [4, rows], 'w'),
          out: s.upload(out, [rows, dim], 'out'),
        };
        const d = await prepareBilinearRows(gpu, io, shape, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.out)]);
        return { ...r, want: bilinearRowsReference(table, idx, w, out, shape) };
      }),
  };
}

// ----------------------------------------------------------------------------------------- elementwise

/** Inputs span [-range, range]; the tail of the array holds extremes (+-1e4, +-1e30) to catch overflow. */
export function geluTanhCase(n: number, o: CommonOptions & { range?: number } = {}): KernelCase {
  const seed = o.seed ?? 4;
  const range = o.range ?? 6;
  return {
    kernel: 'gelu-tanh',
    label: `gelu-tanh n=${n}${wgLabel(o)}`,
    tolerance: F32_TOLERANCE,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(n, seed, -range, range);
        const extremes = [1e4, -1e4, 1e30, -1e30];
        for (let i = 0; i < Math.min(extremes.length, n); i++) x[n - 1 - i] = extremes[i];
        const io = { x: s.upload(x, [n], 'x'), y: s.zeros([n], 'f32', 'y') };
        const d = await prepareGeluTanh(gpu, io, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)]);
        return { ...r, want: geluTanhReference(x) };
      }),
  };
}

export function swigluCase(shape: SwigluShape, o: CommonOptions = {}): KernelCase {
  const { rows, dim } = shape;
  const seed = o.seed ?? 5;
  return {
    kernel: 'swiglu',
    label: `swiglu rows=${rows} dim=${dim}${wgLabel(o)}`,
    tolerance: F32_TOLERANCE,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(rows * 2 * dim, seed, -8, 8);
        const io = { x: s.upload(x, [rows, 2 * dim], 'x'), y: s.zeros([rows, dim], 'f32', 'y') };
        const d = await prepareSwiglu(gpu, io, shape, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)]);
        return { ...r, want: swigluReference(x, shape) };
      }),
  };
}

export function residualAddCase(n: number, o: CommonOptions = {}): KernelCase {
  const seed = o.seed ?? 6;
  return {
    kernel: 'residual-add',
    label: `residual-add n=${n}${wgLabel(o)}`,
    tolerance: EXACT,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const acc = randomUniform(n, seed, -10, 10);
        const x = randomUniform(n, seed + 1, -10, 10);
        const io = { acc: s.upload(acc, [n], 'acc'), x: s.upload(x, [n], 'x') };
        const d = await prepareResidualAdd(gpu, io, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.acc)]);
        return { ...r, want: residualAddReference(acc, x) };
      }),
  };
}

export function copyCase(n: number, o: CommonOptions = {}): KernelCase {
  const seed = o.seed ?? 7;
  return {
    kernel: 'copy',
    label: `copy n=${n}${wgLabel(o)}`,
    tolerance: EXACT,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(n, seed);
        const io = { x: s.upload(x, [n], 'x'), y: s.zeros([n], 'f32', 'y') };
        const d = await prepareCopy(gpu, io, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)]);
        return { ...r, want: copyReference(x) };
      }),
  };
}

// ----------------------------------------------------------------------------------------- rows

export function softmaxCase(shape: SoftmaxShape, o: CommonOptions & { range?: number } = {}): KernelCase {
  const { rows, cols } = shape;
  const seed = o.seed ?? 8;
  const range = o.range ?? 10;
  return {
    kernel: 'softmax',
    label: `softmax rows=${rows} cols=${cols}${range !== 10 ? ` range=${range}` : ''}${wgLabel(o)}`,
    // exp() in WGSL is accurate to 3 + 2|x| ULP, so relative error grows with the input range.
    tolerance: { atol: 1e-6, rtol: 1e-4 + range * 2e-6 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(rows * cols, seed, -range, range);
        const io = { x: s.upload(x, [rows, cols], 'x'), y: s.zeros([rows, cols], 'f32', 'y') };
        const d = await prepareSoftmax(gpu, io, shape, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)]);
        return { ...r, want: softmaxReference(x, shape) };
      }),
  };
}

/** Random logits with planted ties (the first copy must win), one row of equal values, rows with NaN / -inf. */
export function argmaxCase(shape: ArgmaxShape, o: CommonOptions = {}): KernelCase {
  const { rows, cols } = shape;
  const seed = o.seed ?? 9;
  return {
    kernel: 'argmax',
    label: `argmax rows=${rows} cols=${cols}${wgLabel(o)}`,
    tolerance: EXACT,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(rows * cols, seed, -5, 5);
        const picks = randomInts(rows * 2, seed + 1, cols);
        for (let r = 0; r < rows; r++) {
          const [a, b] = [picks[2 * r], picks[2 * r + 1]];
          x[r * cols + a] = 9;
          x[r * cols + b] = 9;
        }
        if (rows > 1) x.fill(1, (rows - 1) * cols, rows * cols);
        if (rows > 2) x[cols + picks[0]] = Number.NaN; // row 1: a NaN -> NON_FINITE_TOKEN
        if (rows > 3) x[2 * cols + picks[1]] = -Infinity; // row 2: an infinity -> NON_FINITE_TOKEN
        const io = { x: s.upload(x, [rows, cols], 'x'), out: s.zeros([rows], 'u32', 'out') };
        const d = await prepareArgmax(gpu, io, shape, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readU32(io.out)]);
        return { ...r, want: argmaxReference(x, shape) };
      }),
  };
}

// ----------------------------------------------------------------------------------------- positions

export function ropeCase(
  shape: RopeShape,
  o: CommonOptions & { theta?: number; positionOffset?: number; badPosition?: boolean } = {},
): KernelCase {
  const { numTokens, numHeads, headDim, maxPositions } = shape;
  const seed = o.seed ?? 10;
  const theta = o.theta ?? 100000;
  const offset = o.positionOffset ?? 0;
  return {
    kernel: 'rope',
    label: `rope tokens=${numTokens} heads=${numHeads}${shape.rotaryHeads ? ` rotary=${shape.rotaryHeads}` : ''} headDim=${headDim}${shape.mrope ? ` mrope=[${shape.mrope.section.join(',')}]${shape.mrope.interleaved ? ' interleaved' : ''}` : ''} theta=${theta} offset=${offset}${o.badPosition ? ' +bad position' : ''}${wgLabel(o)}`,
    // One f32 multiply-add per output (the table is exact): a few ULP.
    tolerance: { atol: 1e-6, rtol: 1e-6 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(numTokens * numHeads * headDim, seed);
        // M-RoPE: three rows that differ, as an image's (t, h, w) do; a bad position goes on the w row.
        const rows = shape.mrope ? 3 : 1;
        const positions = new Uint32Array(rows * numTokens);
        for (let r = 0; r < rows; r++) {
          for (let t = 0; t < numTokens; t++)
            positions[r * numTokens + t] = Math.min(offset + (r === 0 ? t : (t * (5 + 2 * r)) % 13), maxPositions - 1);
        }
        if (o.badPosition) positions[rows * numTokens - 1] = maxPositions + 7;
        const table = ropeCosSinTable(theta, headDim, maxPositions);
        const io = {
          x: s.upload(x, [numTokens, numHeads, headDim], 'x'),
          positions: s.upload(positions, shape.mrope ? [3, numTokens] : [numTokens], 'positions'),
          cosSin: s.upload(table, [maxPositions, headDim], 'cosSin'),
          errors: s.zeros([2], 'u32', 'errors'),
        };
        const d = await prepareRope(gpu, io, shape, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.x), await gpu.readU32(io.errors)]);
        const flags = o.badPosition ? [1, maxPositions + 7] : [0, 0];
        return { ...r, want: concat(ropeReference(x, positions, table, shape), flags) };
      }),
  };
}

export function embeddingGatherCase(
  shape: EmbeddingGatherShape,
  /** parts: the table split in that many parts of rows (weights larger than one binding), one gather each. */
  o: CommonOptions & { badId?: boolean; format?: WeightFormat; parts?: number } = {},
): KernelCase {
  const { numTokens, vocab, dim } = shape;
  const seed = o.seed ?? 11;
  const format = o.format ?? 'f32';
  const parts = rowParts(vocab, o.parts ?? 1);
  return {
    kernel: 'embedding-gather',
    label: `embedding-gather tokens=${numTokens} vocab=${vocab} dim=${dim}${format !== 'f32' ? ` ${format}` : ''}${o.badId ? ' +bad id' : ''}${parts.length > 1 ? ` in ${parts.length} parts` : ''}${wgLabel(o)}`,
    // A copy is exact; a q4 value q * scale + min may be computed with one fused multiply-add on the GPU
    // and two roundings on the host: 1 ulp.
    tolerance: format === 'q4' ? { atol: 1e-7, rtol: 2 ** -22 } : EXACT,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const table = randomUniform(vocab * dim, seed);
        const ids = randomInts(numTokens, seed + 1, vocab);
        ids[0] = vocab - 1;
        if (o.badId) ids[numTokens - 1] = vocab + 3;
        const io = {
          ids: s.upload(ids, [numTokens], 'ids'),
          out: s.zeros([numTokens, dim], 'f32', 'out'),
          errors: s.zeros([2], 'u32', 'errors'),
        };
        const ds = await Promise.all(
          parts.map(([first, rows]) =>
            prepareEmbeddingGather(
              gpu,
              { ...io, table: s.weight(format, table.subarray(first * dim, (first + rows) * dim), rows, dim, `table[${first}:]`) },
              { ...shape, vocab: rows, part: { first, total: vocab } },
              { workgroupSize: o.workgroupSize },
            ),
          ),
        );
        const r = await runDispatches(gpu, ds, async () => [await gpu.readF32(io.out), await gpu.readU32(io.errors)]);
        const flags = o.badId ? [1, vocab + 3] : [0, 0];
        return { ...r, want: concat(embeddingGatherReference(ids, asStored(format, table, vocab, dim), shape), flags) };
      }),
  };
}

// ----------------------------------------------------------------------------------------- vision

/** Recent ViT attention references by shape, seed and mask (their inputs are a function of these). */
const vitReferenceMemo = new Map<string, Float32Array>();

export function vitAttentionCase(
  shape: Omit<VitAttentionShape, 'headDim'> & { headDim?: number },
  o: CommonOptions & {
    maskedKeys?: number;
    headCode?: HeadCode;
    plan?: VitAttentionPlan;
    scoresBudgetBytes?: number;
    headsPerPiece?: number;
    tileKeys?: number;
  } = {},
): KernelCase {
  const full: VitAttentionShape = { ...shape, headDim: shape.headDim ?? 64 };
  const { batch, tokens, heads, headDim: D } = full;
  const seed = o.seed ?? 12;
  const masked = o.maskedKeys ?? 0;
  return {
    kernel: 'vit-attention',
    // Attention run as matmuls goes through its own shaders around the register matmul.
    shaders:
      o.plan === 'matmuls'
        ? ['vit-attention', 'attention-key-mask', 'attention-transpose-v', 'attention-split-heads', 'attention-softmax', 'matmul']
        : o.plan === 'tiled'
          ? ['vit-attention-tiled']
          : undefined,
    label: `vit-attention batch=${batch} tokens=${tokens} heads=${heads} headDim=${D}${masked ? ` masked=${masked}` : ''}${o.plan ? ` ${o.plan}` : ''}${o.headCode ? ` ${o.headCode}` : ''}${o.scoresBudgetBytes ? ` scores<=${o.scoresBudgetBytes}B` : ''}${o.headsPerPiece ? ` pieces of ${o.headsPerPiece} heads` : ''}${o.tileKeys ? ` tiles of ${o.tileKeys} keys` : ''}${wgLabel(o)}`,
    // Online softmax reorders the exp() sums; each exp() is accurate to a few ULP.
    tolerance: { atol: 2e-5, rtol: 2e-4 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const qkv = randomUniform(batch * tokens * 3 * heads * D, seed, -1, 1);
        const mask = new Uint32Array(batch * tokens).fill(1);
        // Mask keys spread over the sequence (padding patches sit at the end of each patch row).
        const picks = randomInts(masked * batch, seed + 1, tokens);
        for (let b = 0; b < batch; b++) for (let i = 0; i < masked; i++) mask[b * tokens + picks[b * masked + i]] = 0;
        const io = {
          qkv: s.upload(qkv, [batch * tokens, 3 * heads * D], 'qkv'),
          mask: s.upload(mask, [batch * tokens], 'mask'),
          out: s.zeros([batch * tokens, heads * D], 'f32', 'out'),
        };
        const d = await prepareVitAttention(gpu, io, full, {
          workgroupSize: o.workgroupSize,
          headCode: o.headCode,
          plan: o.plan,
          scoresBudgetBytes: o.scoresBudgetBytes,
          headsPerPiece: o.headsPerPiece,
          tileKeys: o.tileKeys,
        });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.out)]);
        // The same inputs (shape, seed, mask) under another plan or workgroup size share one reference:
        // at the SigLIP shapes the float64 loop takes seconds.
        const key = `${batch},${tokens},${heads},${D},${seed},${masked}`;
        let want = vitReferenceMemo.get(key);
        if (!want) {
          want = vitAttentionReference(qkv, mask, full);
          vitReferenceMemo.set(key, want);
          if (vitReferenceMemo.size > 4) vitReferenceMemo.delete(vitReferenceMemo.keys().next().value!);
        }
        return { ...r, want };
      }),
  };
}

export function patchEmbedCase(shape: PatchEmbedShape, o: CommonOptions & { plan?: MatmulPlan; format?: WeightFormat } = {}): KernelCase {
  const { batch, channels, height, width, patch, outDim } = shape;
  const seed = o.seed ?? 13;
  const K = channels * patch * patch;
  const format = o.format ?? 'f32';
  return {
    kernel: 'patch-embed',
    label: `patch-embed ${batch}x${channels}x${height}x${width} patch=${patch} out=${outDim}${o.plan ? ` ${o.plan}` : ''}${format !== 'f32' ? ` ${format}` : ''}${wgLabel(o)}`,
    tolerance: { atol: 1e-5 * Math.max(1, Math.sqrt(K / 3)), rtol: 1e-4 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const pixels = randomUniform(batch * channels * height * width, seed);
        const w = randomUniform(outDim * K, seed + 1);
        const b = randomUniform(outDim, seed + 2);
        const numPatches = patchEmbedNumPatches(shape);
        const io = {
          pixels: s.upload(pixels, [batch, channels, height, width], 'pixels'),
          weight: s.weight(format, w, outDim, K, 'weight'),
          bias: s.upload(b, [outDim], 'bias'),
          y: s.zeros([numPatches, outDim], 'f32', 'y'),
        };
        const d = await preparePatchEmbed(gpu, io, shape, { workgroupSize: o.workgroupSize, matmul: { plan: o.plan } });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)]);
        return { ...r, want: patchEmbedReference(pixels, asStored(format, w, outDim, K), b, shape) };
      }),
  };
}

/** conv1d (im2col + matmul with a fused activation) against a direct float64 convolution. */
export function conv1dCase(
  shape: Conv1dShape,
  o: CommonOptions & { plan?: MatmulPlan; format?: WeightFormat; activation?: Activation } = {},
): KernelCase {
  const { batch, channels, length, kernel: k, outDim, layout } = shape;
  const seed = o.seed ?? 17;
  const K = channels * k;
  const format = o.format ?? 'f32';
  const activation = o.activation ?? 'none';
  const rows = batch * conv1dOutputLength(shape);
  return {
    kernel: 'conv1d',
    label: `conv1d ${layout} ${batch}x${channels}x${length} k=${k} s=${shape.stride} p=${shape.padding} out=${outDim}${activation !== 'none' ? ` ${activation}` : ''}${o.plan ? ` ${o.plan}` : ''}${format !== 'f32' ? ` ${format}` : ''}${wgLabel(o)}`,
    tolerance: { atol: 1e-5 * Math.max(1, Math.sqrt(K / 3)), rtol: 1e-4 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const x = randomUniform(batch * channels * length, seed);
        const w = randomUniform(outDim * K, seed + 1);
        const b = randomUniform(outDim, seed + 2);
        const io = {
          x: s.upload(x, layout === 'channels-first' ? [batch, channels, length] : [batch, length, channels], 'x'),
          weight: s.weight(format, w, outDim, K, 'weight'),
          bias: s.upload(b, [outDim], 'bias'),
          y: s.zeros([rows, outDim], 'f32', 'y'),
        };
        const d = await prepareConv1d(gpu, io, shape, { workgroupSize: o.workgroupSize, matmul: { plan: o.plan, activation } });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)]);
        return { ...r, want: conv1dReference(x, asStored(format, w, outDim, K), b, shape, activation) };
      }),
  };
}

export function pixelShuffleCase(shape: PixelShuffleShape, o: CommonOptions = {}): KernelCase {
  const { batch, seq, embed, scale } = shape;
  const seed = o.seed ?? 14;
  return {
    kernel: 'pixel-shuffle',
    label: `pixel-shuffle batch=${batch} seq=${seq} embed=${embed} scale=${scale}${wgLabel(o)}`,
    tolerance: EXACT,
    execute: (gpu) =>
      withScratch(gpu, async (s: Scratch) => {
        const x = randomUniform(batch * seq * embed, seed);
        const io = { x: s.upload(x, [batch, seq, embed], 'x'), out: s.zeros(pixelShuffleOutputShape(shape), 'f32', 'out') };
        const d = await preparePixelShuffle(gpu, io, shape, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.out)]);
        return { ...r, want: pixelShuffleReference(x, shape) };
      }),
  };
}
