// Makes sure the ONNX export of the bench model exists, is current and has been checked: runs
// bench/onnx-export/export.py with Debian's Python (torch 1.13) when <model>/onnx/manifest.json is missing
// or stale (another exporter source, other weights, another bench request), then bench/model/onnx-check.ts.
// Returns what the report prints about the export.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkOnnxExport } from './onnx-check';
import type { ExportFigures } from './model-result';

export const PYTHON = '/usr/bin/python3';

export class OnnxExportError extends Error {
  override readonly name = 'OnnxExportError';
}

/** <model>/onnx/manifest.json as the export scripts write it (bench:audio's export too). */
export interface ExportManifest {
  recipe: string;
  source: Record<string, string>;
  torch: string;
  opset: number;
  files: Record<string, { bytes: number; sha256: string }>;
  check: Record<string, unknown>;
}

/** Same as export.py recipe_hash(): sha256 over the sorted .py files of bench/onnx-export, name NUL content. */
export function recipeHash(exportDir: string): string {
  const h = createHash('sha256');
  for (const name of readdirSync(exportDir)
    .filter((n) => n.endsWith('.py'))
    .sort()) {
    h.update(Buffer.concat([Buffer.from(name), Buffer.from([0]), readFileSync(join(exportDir, name))]));
  }
  return h.digest('hex');
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Why the export must be redone, or undefined when it is current. */
async function staleReason(modelDir: string, exportDir: string): Promise<string | undefined> {
  const onnxDir = join(modelDir, 'onnx');
  const manifestPath = join(onnxDir, 'manifest.json');
  if (!existsSync(manifestPath)) return 'no onnx/manifest.json';
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as ExportManifest;
  if (manifest.recipe !== recipeHash(exportDir)) return 'bench/onnx-export/*.py changed since the export';
  const model = JSON.parse(readFileSync(join(modelDir, 'manifest.json'), 'utf8')) as { files: Record<string, string> };
  if (manifest.source['model.safetensors'] !== model.files['model.safetensors']) return 'the weights changed since the export';
  for (const name of ['bench-input/input.json', 'bench-input/pixel_values.f32']) {
    if (manifest.source[name] !== (await sha256File(join(modelDir, name)))) return `${name} changed since the export`;
  }
  for (const [name, f] of Object.entries(manifest.files)) {
    const path = join(onnxDir, name);
    if (!existsSync(path) || statSync(path).size !== f.bytes) return `onnx/${name} is missing or has another size`;
  }
  if (!existsSync(join(onnxDir, 'ort-check.json'))) return 'the onnxruntime check has not run';
  return undefined;
}

/** Runs an export script with Debian's Python, passing its '[onnx-export]' lines to `log` (bench:audio's export too). */
export function runPython(args: string[], cwd: string, log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } });
    const tail: string[] = [];
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        tail.push(line);
        if (tail.length > 20) tail.shift();
        if (line.startsWith('[onnx-export]')) log(line.replace('[onnx-export] ', 'onnx export: '));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (e) =>
      reject(new OnnxExportError(`could not start ${PYTHON}: ${e.message}. The export needs Debian's python3 with torch and onnx.`)),
    );
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new OnnxExportError(`${PYTHON} ${args.join(' ')} exited with ${code}; last output:\n${tail.join('\n')}`));
    });
  });
}

export async function ensureOnnxExport(
  modelDir: string,
  repoRoot: string,
  log: (line: string) => void,
  force = false,
): Promise<ExportFigures> {
  const exportDir = join(repoRoot, 'bench/onnx-export');
  const reason = force ? '--force-export' : await staleReason(modelDir, exportDir);
  if (reason) {
    log(`onnx export: (re)exporting because ${reason}; this takes several minutes (checks against test/reference first)`);
    await runPython([join(exportDir, 'export.py'), '--model', modelDir], repoRoot, log);
    await checkOnnxExport(modelDir, log);
  } else {
    log('onnx export: current (recipe, weights and bench input unchanged), not re-exported');
  }
  const onnxDir = join(modelDir, 'onnx');
  const manifest = JSON.parse(readFileSync(join(onnxDir, 'manifest.json'), 'utf8')) as ExportManifest;
  return {
    files: manifest.files,
    opset: manifest.opset,
    torch: manifest.torch,
    check: manifest.check,
    ortCheck: JSON.parse(readFileSync(join(onnxDir, 'ort-check.json'), 'utf8')),
  };
}
