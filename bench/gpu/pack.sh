#!/usr/bin/env bash
# bench/gpu/pack.sh: packs what bench/gpu/on-device.sh needs on a machine with a GPU and nothing else
# (no Node, no npm registry): the built library (dist/), Node itself, the runtime dependencies dist/ imports
# (Dawn's webgpu build for linux-x64 only, sharp for images), the bench-model generator as one file, and
# the Vulkan loader. Everything lands in .devcarry/ (git-ignored through .git/info/exclude), under the
# 64 MiB a device call carries with the working tree.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.devcarry/' .git/info/exclude || echo '/.devcarry/' >> .git/info/exclude
rm -rf .devcarry && mkdir -p .devcarry/gl /tmp/tessera-pack
npx vite build --mode lib --logLevel warn
npx esbuild scripts/make-bench-model.ts --bundle --platform=node --format=esm --outfile=.devcarry/make-bench-model.mjs --log-level=warning
# The Vulkan loader and GLVND (NVIDIA's Vulkan driver is libGLX_nvidia, which needs libGLdispatch).
(cd .devcarry/gl && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 2>/dev/null)

stage=/tmp/tessera-pack/rt
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/node_modules/@huggingface" "$stage/node_modules/@img" "$stage/node_modules/webgpu/dist/linux-x64" "$stage/node_modules/mediabunny"
cp "$(readlink -f "$(command -v node)")" "$stage/bin/node"
cp -r node_modules/{comlink,hash-wasm,idb-keyval,sharp,detect-libc,semver} "$stage/node_modules/"
cp -r node_modules/@huggingface/{jinja,tokenizers} "$stage/node_modules/@huggingface/"
cp -r node_modules/@img/{colour,sharp-libvips-linux-x64,sharp-linux-x64} "$stage/node_modules/@img/"
cp node_modules/webgpu/{index.js,package.json} "$stage/node_modules/webgpu/"
cp node_modules/webgpu/dist/linux-x64/* "$stage/node_modules/webgpu/dist/linux-x64/"
cp -r node_modules/mediabunny/{package.json,dist} "$stage/node_modules/mediabunny/"
tar -C "$stage" -cf - bin node_modules | xz -T2 -6 > .devcarry/runtime.tar.xz
du -sh .devcarry/* dist
