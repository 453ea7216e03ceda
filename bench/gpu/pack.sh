#!/usr/bin/env bash
# bench/gpu/pack.sh: packs what bench/gpu/on-device.sh needs on a machine with a GPU and nothing else
# (no Node, no npm registry): the built library (dist/, and dist-base/ when present), Node itself, the runtime dependencies dist/ imports
# (bench/gpu/pack-runtime.mjs; Dawn's webgpu build for linux-x64 only, sharp for images), the bench-model generators and the Qwen-VL
# bench as one file each, and
# the Vulkan loader. Everything lands in .devcarry/ and .devcarry-node/ (git-ignored through .git/info/exclude);
# the summary at the end says whether one device call carries both or two calls are needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.devcarry/' .git/info/exclude || echo '/.devcarry/' >> .git/info/exclude
rm -rf .devcarry && mkdir -p .devcarry/gl /tmp/tessera-pack
npx vite build --mode lib --logLevel warn
npx esbuild scripts/make-bench-model.ts --bundle --platform=node --format=esm --outfile=.devcarry/make-bench-model.mjs --log-level=warning
# The Qwen-VL steps: the tiny checkpoints' generator, and bench/model/qwen.ts (sharp stays a package of the runtime).
npx esbuild scripts/make-tiny-qwen.ts --bundle --platform=node --format=esm --outfile=.devcarry/make-tiny-qwen.mjs --log-level=warning
npx esbuild bench/model/qwen.ts --bundle --platform=node --format=esm --external:sharp --outfile=.devcarry/bench-qwen.mjs --log-level=warning
# The GGUF load step: the Qwen-VL converter (the bench model's Q4_K_M pair is written on the device).
npx esbuild scripts/gguf-convert-qwen.ts --bundle --platform=node --format=esm --outfile=.devcarry/gguf-convert-qwen.mjs --log-level=warning
# The Vulkan loader and GLVND (NVIDIA's Vulkan driver is libGLX_nvidia, which needs libGLdispatch).
(cd .devcarry/gl && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 2>/dev/null)

stage=/tmp/tessera-pack/rt
rm -rf "$stage" && mkdir -p "$stage/bin"
# Debian's node and Dawn's dawn.node carry debug symbols: stripped, the carry fits the 64 MiB a call takes
# beside the tracked tree.
strip -o "$stage/bin/node" "$(readlink -f "$(command -v node)")"
node bench/gpu/pack-runtime.mjs dist "$stage"
strip "$stage/node_modules/webgpu/dist/linux-x64/dawn.node"
# Node alone in .devcarry-node/ (about 20 MiB), the rest in .devcarry/: when the tracked tree and both do not
# fit the 64 MiB one call carries, they go in two calls (the summary below says which).
grep -qx '/.devcarry-node/' .git/info/exclude || echo '/.devcarry-node/' >> .git/info/exclude
rm -rf .devcarry-node && mkdir -p .devcarry-node
tar -C "$stage" -cf - bin | xz -T2 --x86 --lzma2=preset=9e,dict=128MiB > .devcarry-node/node.tar.xz
tar -C "$stage" -cf - node_modules | xz -T2 --x86 --lzma2=preset=9e,dict=128MiB > .devcarry/runtime.tar.xz
# dist/ (and dist-base/, the previous tree's build, when it is here) travel as archives inside .devcarry/,
# without source maps (nothing there reads them): the tracked tree plus the carry must fit in 64 MiB.
tar -cf - --exclude='*.map' dist | xz -T2 -9e > .devcarry/dist.tar.xz
if [ -d dist-base ]; then tar -cf - --exclude='*.map' dist-base | xz -T2 -9e > .devcarry/dist-base.tar.xz; fi
du -sh .devcarry-node/* .devcarry/*
# The device tool counts disk blocks: the tracked tree plus what a call carries must stay under 64 MiB.
tracked=$(git ls-files -z | du -c --files0-from=- | tail -1 | cut -f1)
node_kib=$(du -s .devcarry-node | cut -f1)
rest_kib=$(du -s .devcarry | cut -f1)
if [ $((tracked + node_kib + rest_kib)) -lt 65000 ]; then
  echo "pack: one device call: carry [\".devcarry-node\", \".devcarry\"], command bash bench/gpu/on-device.sh"
else
  echo "pack: the tracked tree (${tracked} KiB) and the carry (${node_kib} + ${rest_kib} KiB) exceed one call: two calls on the same warm machine:"
  echo "pack:   1. carry [\".devcarry-node\"], command bash bench/gpu/on-device.sh --stage-node"
  echo "pack:   2. carry [\".devcarry\"], command bash bench/gpu/on-device.sh"
fi
