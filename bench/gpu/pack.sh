#!/usr/bin/env bash
# bench/gpu/pack.sh: packs what bench/gpu/on-device.sh needs on a machine with a GPU and nothing else
# (no Node, no npm registry): the built library (dist/, and dist-base/ when present), Node itself, the runtime dependencies dist/ imports
# (bench/gpu/pack-runtime.mjs; Dawn's webgpu build for linux-x64 only, sharp for images), the bench-model generator as one file, and
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
rm -rf "$stage" && mkdir -p "$stage/bin"
# Debian's node and Dawn's dawn.node carry debug symbols: stripped, the carry fits the 64 MiB a call takes
# beside the tracked tree.
strip -o "$stage/bin/node" "$(readlink -f "$(command -v node)")"
node bench/gpu/pack-runtime.mjs dist "$stage"
strip "$stage/node_modules/webgpu/dist/linux-x64/dawn.node"
tar -C "$stage" -cf - bin node_modules | xz -T2 --x86 --lzma2=preset=9e,dict=128MiB > .devcarry/runtime.tar.xz
# dist/ (and dist-base/, the previous tree's build, when it is here) travel as archives inside .devcarry/,
# without source maps (nothing there reads them): the tracked tree plus the carry must fit in 64 MiB.
tar -cf - --exclude='*.map' dist | xz -T2 -9e > .devcarry/dist.tar.xz
if [ -d dist-base ]; then tar -cf - --exclude='*.map' dist-base | xz -T2 -9e > .devcarry/dist-base.tar.xz; fi
du -sh .devcarry/*
