// Makes sure the ONNX export of the audio bench model exists, is current and has been checked: runs
// bench/onnx-export/voxtral/voxtral_export.py with Debian's Python (torch 1.13) when <model>/onnx/manifest.json
// is missing or stale (another exporter source, other weights or config), then bench/audio/onnx-check.ts.
// Same scheme as bench/model/model-export.ts (SmolVLM); returns what the report prints about the export.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ExportManifest, runPython } from '../model/model-export';
import { type AudioOrtCheck, checkAudioOnnxExport } from './onnx-check';

export interface AudioExportFigures {
  files: Record<string, { bytes: number; sha256: string }>;
  opset: number;
  torch: string;
  check: Record<string, unknown>;
  ortCheck: AudioOrtCheck;
}

/** Same as voxtral_export.py recipe_hash(): bench/onnx-export/*.py then voxtral/*.py, sorted, name NUL content. */
export function voxtralRecipeHash(exportDir: string): string {
  const h = createHash('sha256');
  for (const [folder, prefix] of [
    [exportDir, ''],
    [join(exportDir, 'voxtral'), 'voxtral/'],
  ]) {
    for (const name of readdirSync(folder)
      .filter((n) => n.endsWith('.py'))
      .sort()) {
      h.update(Buffer.concat([Buffer.from(prefix + name), Buffer.from([0]), readFileSync(join(folder, name))]));
    }
  }
  return h.digest('hex');
}

const CHECK_MISSING = 'the onnxruntime check has not run';

/** Why the export must be redone, or undefined when it is current. */
function staleReason(modelDir: string, exportDir: string): string | undefined {
  const onnxDir = join(modelDir, 'onnx');
  const manifestPath = join(onnxDir, 'manifest.json');
  if (!existsSync(manifestPath)) return 'no onnx/manifest.json';
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as ExportManifest;
  if (manifest.recipe !== voxtralRecipeHash(exportDir)) return 'bench/onnx-export/{*.py,voxtral/*.py} changed since the export';
  const model = JSON.parse(readFileSync(join(modelDir, 'manifest.json'), 'utf8')) as { files: Record<string, string> };
  for (const name of ['model.safetensors', 'config.json']) {
    if (manifest.source[name] !== model.files[name]) return `${name} changed since the export`;
  }
  for (const [name, f] of Object.entries(manifest.files)) {
    const path = join(onnxDir, name);
    if (!existsSync(path) || statSync(path).size !== f.bytes) return `onnx/${name} is missing or has another size`;
  }
  if (!existsSync(join(onnxDir, 'ort-check.json'))) return CHECK_MISSING;
  return undefined;
}

export async function ensureAudioOnnxExport(modelDir: string, repoRoot: string, log: (line: string) => void): Promise<AudioExportFigures> {
  const exportDir = join(repoRoot, 'bench/onnx-export');
  const onnxDir = join(modelDir, 'onnx');
  const reason = staleReason(modelDir, exportDir);
  if (reason) {
    if (reason === CHECK_MISSING) {
      log(`onnx export: current, but ${reason}; running it (onnxruntime-web wasm, about a minute or two)`);
    } else {
      log(`onnx export: (re)exporting because ${reason}; this takes 15+ minutes on 2 cores (checks against test/reference first)`);
      await runPython([join(exportDir, 'voxtral/voxtral_export.py'), '--model', modelDir], repoRoot, log);
    }
    await checkAudioOnnxExport(modelDir, log);
  } else {
    log('onnx export: current (recipe, weights and config unchanged), not re-exported');
  }
  const manifest = JSON.parse(readFileSync(join(onnxDir, 'manifest.json'), 'utf8')) as ExportManifest;
  return {
    files: manifest.files,
    opset: manifest.opset,
    torch: manifest.torch,
    check: manifest.check,
    ortCheck: JSON.parse(readFileSync(join(onnxDir, 'ort-check.json'), 'utf8')) as AudioOrtCheck,
  };
}
