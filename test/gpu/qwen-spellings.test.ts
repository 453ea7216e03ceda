// Qwen2.5-VL checkpoints saved by transformers 4.52 or later spell the decoder model.language_model.* and
// the tower model.visual.* (ModelConfig.checkpointSpellings): qwen2_5_vl-tiny's file with its tensors
// renamed so loads, and gives the same logits as under the public checkpoint's names. A name the
// checkpoint has under neither spelling is still a MissingTensorError naming the canonical one.

import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MissingTensorError } from '../../src/errors';
import { parseQwen25VlConfig } from '../../src/families/qwen2_5_vl/config';
import { NodeDirSource } from '../../src/io/model-source-node';
import { loadModelWithConfig } from '../../src/model/load';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** qwen2_5_vl-tiny with its tensors renamed by `rename` (the safetensors header rewritten, the data kept). */
function renamedCopy(rename: (name: string) => string): string {
  const src = join(ensureTinyModels(), 'qwen2_5_vl-tiny');
  const dir = mkdtempSync(join(tmpdir(), 'tessera-spellings-'));
  dirs.push(dir);
  copyFileSync(join(src, 'config.json'), join(dir, 'config.json'));
  const bytes = readFileSync(join(src, 'model.safetensors'));
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')) as Record<string, unknown>;
  const renamed = Object.fromEntries(Object.entries(header).map(([k, v]) => [k === '__metadata__' ? k : rename(k), v]));
  let json = JSON.stringify(renamed);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  writeFileSync(join(dir, 'model.safetensors'), Buffer.concat([size, Buffer.from(json), bytes.subarray(8 + n)]));
  return dir;
}

async function firstLogits(dir: string): Promise<Float32Array> {
  const files = new NodeDirSource(dir);
  const config = parseQwen25VlConfig(JSON.parse((await files.readText('config.json'))!));
  const model = await loadModelWithConfig(gpu(), files, config, { kvCacheTokens: 64, maxTokensPerStep: 16, maxSeqs: 1 });
  try {
    const tokenIds = Uint32Array.of(9707, 11, 1879, 0);
    return await model.runner.withScratchSequence(tokenIds.length, async (seqId) => {
      const out = await model.runner.run([{ seqId, tokenIds, start: 0, sample: { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 } }], {
        readLogits: true,
      });
      return out.logits!;
    });
  } finally {
    model.destroy();
  }
}

describe('Qwen2.5-VL checkpoint spellings', () => {
  it('model.language_model.* and model.visual.* load and give the logits of the public names', async () => {
    const newNames = renamedCopy((k) =>
      k.startsWith('model.') ? `model.language_model.${k.slice(6)}` : k.startsWith('visual.') ? `model.visual.${k.slice(7)}` : k,
    );
    const [canonical, respelled] = [await firstLogits(join(ensureTinyModels(), 'qwen2_5_vl-tiny')), await firstLogits(newNames)];
    expect(Array.from(respelled)).toEqual(Array.from(canonical));
  });

  it('a tensor under neither spelling is named by its canonical name', async () => {
    const broken = renamedCopy((k) => (k === 'model.norm.weight' ? 'model.decoder_norm.weight' : k));
    await expect(firstLogits(broken)).rejects.toThrow(MissingTensorError);
    await expect(firstLogits(broken)).rejects.toThrow(/'model\.norm\.weight'/);
  });
});
