// Finishes the declarations `tsc -p tsconfig.build.json` emitted into dist/types, for consumers:
//
// 1. Every relative specifier gets a `.js` extension ('./gpu/context' -> './gpu/context.js', './kernels'
//    -> './kernels/index.js'), the form Node's ESM resolution needs. Without it a consumer on
//    moduleResolution NodeNext or node16 cannot follow the declarations' own imports, and every Tessera
//    type silently becomes `any`. The source keeps extensionless imports (moduleResolution
//    bundler); a specifier that matches no emitted file fails the build.
// 2. The entry points reference types/web-globals.d.ts (src/types/web-globals.ts): empty interfaces for
//    the browser globals the declarations name, so a Node project without lib.dom type-checks them.
// 3. dist/types/ts5/{index,node}.d.ts: the entry points for TypeScript before 6.0 (package.json
//    exports, condition "types@<6"). The browser entry adds `@webgpu/types` (a dependency): TypeScript 6.0
//    and later declare WebGPU in lib.dom (and @webgpu/types would then clash with it), 5.x does not. The
//    Node entry does not: @webgpu/types names DOM types (VideoFrame, PredefinedColorSpace, ImageBitmap,
//    BufferSource, ...) that a Node project without lib.dom lacks, some of them type aliases no shim can
//    declare without clashing where lib.dom is present. There the GPU objects stay the opaque interfaces
//    of web-globals.d.ts; a project that wants their members adds @webgpu/types to its own types.
//
//   tsx scripts/package-types.ts [dir]   (default dist/types)

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const SPECIFIER = /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*)\2/g;
const ENTRIES = ['index', 'node'];

function* declarationFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* declarationFiles(p);
    else if (p.endsWith('.d.ts')) yield p;
  }
}

function withJsExtension(file: string, specifier: string): string {
  if (/\.(js|mjs|cjs|json)$/.test(specifier)) return specifier;
  const base = resolve(dirname(file), specifier);
  if (existsSync(`${base}.d.ts`)) return `${specifier}.js`;
  if (existsSync(join(base, 'index.d.ts'))) return `${specifier.replace(/\/$/, '')}/index.js`;
  throw new Error(`${file}: '${specifier}' matches no declaration file (${base}.d.ts or ${base}/index.d.ts)`);
}

const dir = resolve(process.argv[2] ?? 'dist/types');
let numRewritten = 0;
for (const file of declarationFiles(dir)) {
  const text = readFileSync(file, 'utf8');
  const fixed = text.replace(SPECIFIER, (_m, lead: string, quote: string, spec: string) => {
    numRewritten++;
    return `${lead}${quote}${withJsExtension(file, spec)}${quote}`;
  });
  if (fixed !== text) writeFileSync(file, fixed);
}

const WEB_GLOBALS = '/// <reference path="./types/web-globals.d.ts" />\n';
if (!existsSync(join(dir, 'types/web-globals.d.ts'))) throw new Error(`${dir}/types/web-globals.d.ts was not emitted`);
mkdirSync(join(dir, 'ts5'), { recursive: true });
for (const entry of ENTRIES) {
  const file = join(dir, `${entry}.d.ts`);
  if (!existsSync(file)) throw new Error(`${dir}/${entry}.d.ts was not emitted`);
  const text = readFileSync(file, 'utf8');
  if (!text.startsWith(WEB_GLOBALS)) writeFileSync(file, WEB_GLOBALS + text);
  const webgpu =
    entry === 'node'
      ? "// TypeScript < 6.0, Node: WebGPU's objects stay opaque (@webgpu/types needs lib.dom; scripts/package-types.ts).\n"
      : '// TypeScript < 6.0 has no WebGPU in lib.dom: take it from @webgpu/types.\n/// <reference types="@webgpu/types" />\n';
  writeFileSync(join(dir, 'ts5', `${entry}.d.ts`), `${webgpu}export * from '../${entry}.js';\n`);
}
console.log(`package-types: ${numRewritten} relative specifiers in ${dir} end in .js; ts5/ entries for ${ENTRIES.join(', ')}`);
