#!/usr/bin/env node
// bench/gpu/pack-runtime.mjs <dist> <stage>: copies into <stage>/node_modules every package the built
// library imports (statically or by import()), with the packages those depend on, from this checkout's
// node_modules. Called by bench/gpu/pack.sh. The GPU machine has no npm registry, and the carry must fit
// beside the tracked tree in 64 MiB, so only what Node loads is copied: no source maps, type declarations,
// docs, tests, CommonJS builds of ES-module packages, or other platforms' binaries.
// Left out on purpose: onnxruntime-* (the CPU backend; the GPU bench never loads it) and optional peers a
// package names but this checkout does not install. webgpu and sharp's native parts are copied for linux-x64 only.
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dist, stage] = process.argv.slice(2);
if (!dist || !stage) {
  console.error('usage: pack-runtime.mjs <dist> <stage>');
  process.exit(2);
}
const skipped = new Set(['onnxruntime-node', 'onnxruntime-web']);
// Per package, paths (relative to the package) Node never loads here.
const dropped = {
  hono: ['dist/cjs', 'dist/types'],
  mediabunny: ['dist/bundles', 'dist/mediabunny.d.ts'],
  bintrees: ['test', 'examples', 'dist'],
  webgpu: ['dist/darwin-universal', 'dist/win32-x64', 'dist/win32-arm64', 'dist/linux-arm64', 'build'],
};
const droppedFile = /\.(map|d\.ts|d\.mts|d\.cts|md)$/;

// Declarations only (mediabunny depends on the DOM's): nothing for Node to load.
const typesOnly = (name) => name.startsWith('@types/') || name === '@webgpu/types';

const packageName = (specifier) => {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
};

const wanted = new Set();
for (const file of readdirSync(dist)) {
  if (!file.endsWith('.js')) continue;
  const text = readFileSync(join(dist, file), 'utf8');
  // Rollup writes import statements one per line and import() with double quotes; comments are not matched.
  const statements = text.matchAll(/^(?:import|export)\b[^\n]*?\bfrom\s*"([^"./][^"]*)"/gm);
  const dynamic = text.matchAll(/\bimport\(\s*"([^"./][^"]*)"\s*\)/g);
  for (const m of [...statements, ...dynamic]) {
    const name = packageName(m[1]);
    if (!name.startsWith('node:') && !skipped.has(name)) wanted.add(name);
  }
}
// sharp loads its libvips build through these, by a computed name the scan above cannot see.
for (const name of ['@img/sharp-linux-x64', '@img/sharp-libvips-linux-x64']) wanted.add(name);

const copied = new Set();
const queue = [...wanted];
while (queue.length > 0) {
  const name = queue.shift();
  if (copied.has(name)) continue;
  const from = join('node_modules', name);
  if (!existsSync(join(from, 'package.json'))) throw new Error(`pack-runtime: ${name} is imported by ${dist} but not installed`);
  copied.add(name);
  const skip = (dropped[name] ?? []).map((p) => join(from, p));
  cpSync(from, join(stage, 'node_modules', name), {
    recursive: true,
    filter: (src) => !droppedFile.test(src) && !skip.some((p) => src === p || src.startsWith(`${p}/`)),
  });
  const manifest = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) if (!typesOnly(dep)) queue.push(dep);
}
console.log([...copied].sort().join(' '));
