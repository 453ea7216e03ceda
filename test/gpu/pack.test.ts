// `tessera pack` (src/cli/pack.ts) and loading what it writes (src/model/weights/packed-checkpoint.ts): the
// packed folder loads in its dtype and answers exactly as the original checkpoint loaded in that dtype (the
// same packed bytes, bit for bit: tokens and log probabilities), through the engine with its encoder
// worker; it refuses another dtype, a damaged or missing packed file, and a config it was not packed for,
// each by name.

import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packCheckpoint } from '../../src/cli/pack';
import { CheckpointFormatError, ModelFileError, PackedDtypeError } from '../../src/errors';
import { askAboutSample } from '../helpers/ask-sample';
import { testEngine } from '../helpers/engine';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'tessera-pack-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const options = { kvCacheTokens: 512, maxTokensPerStep: 64, maxSeqs: 2 } as const;
const lines: string[] = [];
const err = (t: string) => lines.push(t);

describe.each([
  ['smolvlm-tiny', 'q4', false],
  ['qwen2_5_vl-tiny', 'q8', false], // tied head
  // DeepStack mergers; per-part dtype; the encoder in its worker (its weights digest from the packed sums)
  ['qwen3_vl-tiny', 'vision=f16,text=q4', true],
] as const)('%s packed as %s', (name, dtypeText, workers) => {
  const dtype = Object.fromEntries(
    dtypeText.includes('=')
      ? dtypeText.split(',').map((p) => p.split('='))
      : [
          ['vision', dtypeText],
          ['audio', dtypeText],
          ['text', dtypeText],
        ],
  );
  const original = () => `${ensureTinyModels()}/${name}`;
  const packed = () => join(scratch, `${name}-${dtypeText}`);

  it('writes the packed file, a manifest and the other files; loads it and answers as the original in that dtype', async () => {
    const manifest = await packCheckpoint(gpu(), { model: original(), out: packed(), dtype, err });
    expect(Object.keys(manifest.files)).toEqual(['model.safetensors']);
    const file = join(packed(), manifest.files['model.safetensors']);
    expect(statSync(file).size).toBeLessThan(statSync(join(original(), 'model.safetensors')).size);
    expect(readFileSync(join(packed(), 'config.json'), 'utf8')).toBe(readFileSync(join(original(), 'config.json'), 'utf8'));
    const a = await testEngine(gpu(), original(), { ...options, dtype, workers });
    const b = await testEngine(gpu(), packed(), { ...options, workers });
    try {
      const [ra, rb] = [await askAboutSample(a), await askAboutSample(b)];
      expect(rb.tessera.tokenIds).toEqual(ra.tessera.tokenIds);
      expect(rb.choices[0].logprobs!.content!.map((l) => l.logprob)).toEqual(ra.choices[0].logprobs!.content!.map((l) => l.logprob));
      if (a.model.backend !== 'webgpu' || b.model.backend !== 'webgpu') throw new Error('not on WebGPU');
      expect(Object.values(b.model.weights.storedCopies)).toEqual(['packed']);
      expect(b.model.weights.dtype).toEqual(a.model.weights.dtype);
    } finally {
      a.destroy();
      b.destroy();
    }
  });
});

describe('a packed checkpoint refuses', () => {
  const packed = () => join(scratch, 'smolvlm-tiny-q4');
  const copy = (label: string) => {
    const dir = join(scratch, label);
    cpSync(packed(), dir, { recursive: true });
    return dir;
  };
  const fails = (dir: string, o: Record<string, unknown> = {}) =>
    testEngine(gpu(), dir, { ...options, ...o }).then(
      (e) => {
        e.destroy();
        return undefined;
      },
      (e: unknown) => e,
    );

  it('another dtype, naming both', async () => {
    const e = await fails(packed(), { dtype: 'q8' });
    expect(e).toBeInstanceOf(PackedDtypeError);
    expect((e as Error).message).toMatch(/packed as vision=q4,audio=q4,text=q4 .* but vision=q8,audio=q8,text=q8 was asked for/);
  });

  it('a damaged packed file (one byte changed): its checksum', async () => {
    const dir = copy('damaged');
    const file = join(dir, 'model.q4.tsqw');
    const bytes = readFileSync(file);
    bytes[bytes.length - 1000] ^= 1;
    writeFileSync(file, bytes);
    const e = await fails(dir);
    expect(e).toBeInstanceOf(CheckpointFormatError);
    expect((e as Error).message).toMatch(/model\.q4\.tsqw \(model\.safetensors packed\) .* cannot be loaded: its checksum does not match/);
  });

  it('a packed file the manifest names but the folder lacks', async () => {
    const dir = copy('missing');
    rmSync(join(dir, 'model.q4.tsqw'));
    const e = await fails(dir);
    expect(e).toBeInstanceOf(ModelFileError);
    expect((e as Error).message).toMatch(/model\.q4\.tsqw, which tessera-pack\.json names for model\.safetensors, is not in/);
  });

  it('a config it was not packed for (another width): before any byte reaches the GPU', async () => {
    const dir = copy('other-config');
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    config.text_config.intermediate_size *= 2;
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    const e = await fails(dir);
    expect(e).toBeInstanceOf(CheckpointFormatError);
    expect((e as Error).message).toMatch(/cannot be loaded: tensor \S+ is packed as .* but this model's config needs/);
  });
});
