#!/usr/bin/env bash
# bench/gpu/on-device.sh: run on a lent GPU machine (the device tool) after bench/gpu/pack.sh, with
# carry [".devcarry-node", ".devcarry"] (dist/ and dist-base/ travel inside .devcarry as archives), or in two
# calls when pack.sh says they do not fit one: --stage-node with .devcarry-node, then .devcarry. It unpacks Node and the Vulkan loader, then, each step under its own
# timeout and in order of what matters most:
#   1. tessera doctor: every kernel against its CPU reference, with the adapter's variant and with the other
#      ('register'), plus the f16-math cases the device's shader-f16 allows;
#   2. the bench model (scripts/make-bench-model.ts: SmolVLM-256M's shape, random BF16);
#   3. tessera run --json on it (TTFT, decode tok/s, token ids) with each variant, the workgroup variant's
#      two decode plans (fused, separate), f16 weights in f16 math, and q4;
#   4. the tiny Qwen-VL checkpoints' answers against the goldens, and the Qwen-VL bench at real widths;
#   5. tessera profile --json (GPU time per kernel kind) with each variant;
#   6. the Qwen2.5-VL bench model's load as a Q4_K_M GGUF pair against its bf16 -> q4 load (the goal's
#      ">= 3x": on SwiftShader both loads are compile-bound), alternating, two pairs (GPU_SKIP_GGUF=1 skips).
# With dist-base/ (the previous tree's build) carried too, one request alternates between the two trees.
# GPU_SKIP_DOCTOR=1 skips step 1; GPU_COMPARE_ONLY=1 runs only the two trees' requests (GPU_PAIRS, GPU_LONG_PAIRS). Everything lands in $OUT/results.tar.gz; a table of the figures is printed last (bench/gpu/summary.mjs).
set -u
# Each step's files go to /tmp/tessera-gpu-results; $OUT gets them as one results.tar.gz (a device call returns 8 files at most).
DEST=${OUT:-/tmp/tessera-gpu-out}
OUT=/tmp/tessera-gpu-results
rm -rf "$OUT" && mkdir -p "$OUT" "$DEST"
log() { echo "[gpu $(date +%H:%M:%S)] $*"; }

# Node comes in .devcarry-node/, in this call or (--stage-node) in an earlier call on the same warm machine.
mkdir -p /tmp/rt
if [ -f .devcarry-node/node.tar.xz ]; then xz -dc .devcarry-node/node.tar.xz | tar -C /tmp/rt -xf -; fi
if [ "${1:-}" = "--stage-node" ]; then
  /tmp/rt/bin/node --version && echo "node staged in /tmp/rt; now the call carrying .devcarry" && exit 0
  exit 3
fi
if [ ! -x /tmp/rt/bin/node ]; then
  echo "no Node: carry .devcarry-node in this call, or run bash bench/gpu/on-device.sh --stage-node first on this machine"
  exit 3
fi
for f in .devcarry/gl/*.deb; do dpkg -x "$f" /; done
for t in dist dist-base; do
  if [ -f ".devcarry/$t.tar.xz" ]; then rm -rf "$t" && xz -dc ".devcarry/$t.tar.xz" | tar -xf -; fi
done
ldconfig
xz -dc .devcarry/runtime.tar.xz | tar -C /tmp/rt -xf -
export PATH=/tmp/rt/bin:$PATH
rm -rf node_modules && ln -s /tmp/rt/node_modules node_modules
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$icd" ]; then export VK_ICD_FILENAMES=$icd VK_DRIVER_FILES=$icd; fi
# The driver's libraries (the ICD manifest names them without a path) live beside it, outside ld.so's list.
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do [ -d "$d" ] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; done
{ cat "$icd"; ls /usr/local/nvidia/lib64 | grep -i "glx\|vulkan\|nvidia-gl\|EGL" | head; } > "$OUT/vulkan-icd.txt" 2>&1
cat "$OUT/vulkan-icd.txt"
[ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] && export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv; node --version; ldconfig -p | grep -i vulkan; echo "VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-}"; nproc; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

step() { # name timeout_s command...
  local name=$1 t=$2; shift 2
  log "$name"
  local t0=$(date +%s%N)
  timeout "$t" "$@" > "$OUT/$name.json" 2> "$OUT/$name.err"
  local rc=$?
  log "$name: rc $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  [ $rc -ne 0 ] && tail -5 "$OUT/$name.err"
  return 0
}

# Which adapters Dawn sees, with the Vulkan loader's account of the drivers it tried.
VK_LOADER_DEBUG=error,warn,driver timeout 60 node --input-type=module -e "
  const { create } = await import('webgpu');
  const gpu = create([]);
  const a = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  console.log(a ? JSON.stringify({ info: a.info, features: [...a.features] }) : 'no adapter');
" > "$OUT/probe.txt" 2>&1
grep -v '^$' "$OUT/probe.txt" | tail -12
if ! grep -q '"info"' "$OUT/probe.txt"; then
  log "Dawn found no GPU adapter: stopping before the steps"
  tar -C "$OUT" -czf "$DEST/results.tar.gz" .
  exit 3
fi
if [ -z "${GPU_SKIP_DOCTOR:-}${GPU_COMPARE_ONLY:-}" ]; then
  step doctor-auto 120 node dist/cli.js doctor --json
  step doctor-register 120 node dist/cli.js doctor --json --variant register
fi
# GPU_BENCH_MODEL: another checkpoint folder instead (a dry run of this script on the tiny model, say).
M=${GPU_BENCH_MODEL:-.cache/bench-models/smolvlm-256m-random}
if [ -z "${GPU_BENCH_MODEL:-}" ]; then log "bench model"; node .devcarry/make-bench-model.mjs; fi
IMG=public/sample.png
P="Can you describe this image?"
RUN=(node dist/cli.js run --model "$M" --image "$IMG" --prompt "$P" --max-tokens 64 --json --no-weight-cache)
# GPU_COMPARE_ONLY=1: only the bench model's requests on the two trees (no doctor, variants, Qwen or profile).
if [ -z "${GPU_COMPARE_ONLY:-}" ]; then
  step run-workgroup 120 "${RUN[@]}" --variant workgroup
  # The workgroup variant's two decode plans (fused is its default, so run-workgroup is a third sample of it).
  step run-separate 120 "${RUN[@]}" --variant workgroup --decode-plan separate
  step run-fused 120 "${RUN[@]}" --variant workgroup --decode-plan fused
  step run-register 120 "${RUN[@]}" --variant register
  step run-f16-math 120 "${RUN[@]}" --dtype f16 --compute f16
  step run-q4 120 "${RUN[@]}" --dtype q4
fi
# The tree before a change, built into dist-base/ and carried too: one request on each tree, GPU_PAIRS pairs
# (default 3) at 64 tokens and GPU_LONG_PAIRS (default 1) at 512, the tree that goes first alternating
# between pairs (the clock ramps from idle, so a fixed order would favour one tree). The rule: compare one
# request with the previous tree in the same run; a difference near the spread needs more pairs.
if [ -d dist-base ]; then
  BASE=(node dist-base/cli.js run --model "$M" --image "$IMG" --prompt "$P" --json --no-weight-cache)
  HEAD=(node dist/cli.js run --model "$M" --image "$IMG" --prompt "$P" --json --no-weight-cache)
  pairs() { # count tokens first-pair-order
    local i
    for i in $(seq 1 "$1"); do
      if [ $(( (i + $3) % 2 )) -eq 1 ]; then
        step "base-$2-$i" 120 "${BASE[@]}" --max-tokens "$2"; step "head-$2-$i" 120 "${HEAD[@]}" --max-tokens "$2"
      else
        step "head-$2-$i" 120 "${HEAD[@]}" --max-tokens "$2"; step "base-$2-$i" 120 "${BASE[@]}" --max-tokens "$2"
      fi
    done
  }
  pairs "${GPU_PAIRS:-3}" 64 0
  pairs "${GPU_LONG_PAIRS:-1}" 512 1
fi
# Qwen-VL on this GPU (GPU_SKIP_QWEN=1 skips it): the tiny checkpoints (.devcarry/make-tiny-qwen.mjs) answer
# three of the golden requests through the CLI, compared token by token with the float64 reference
# (test/fixtures/goldens/qwen-pipeline.json; summary.mjs), then bench/model/qwen.ts at real widths
# (.devcarry/bench-qwen.mjs: Qwen2.5-VL-3B's and Qwen3-VL-2B's widths, 4 + 4 layers, random BF16).
if [ -z "${GPU_SKIP_QWEN:-}${GPU_COMPARE_ONLY:-}" ] && [ -f .devcarry/make-tiny-qwen.mjs ]; then
  log "tiny Qwen checkpoints"
  node .devcarry/make-tiny-qwen.mjs /tmp/qwen-tiny
  for m in qwen2_5_vl-tiny qwen3_vl-tiny; do
    while IFS=$'\t' read -r id image prompt n; do
      step "qwen-$m-$id" 120 node dist/cli.js run --model "/tmp/qwen-tiny/$m" --image "$image" --prompt "$prompt" \
        --max-tokens "$n" --json --no-weight-cache
    done < <(node bench/gpu/qwen-cases.mjs "$m")
  done
  step bench-qwen 300 node .devcarry/bench-qwen.mjs --no-build --no-browser --tokens=64 --reps=2
  # The same Qwen2.5-VL requests on a device acting as one that binds WebGPU's default 128 MiB: its tied
  # embedding and head (151936 x 2048 bf16, 594 MiB) load in parts of rows.
  step bench-qwen-binding 200 node .devcarry/bench-qwen.mjs --no-build --no-browser --tokens=64 --reps=2 --family qwen2_5_vl --max-binding=134217728
fi
PROF=(node dist/cli.js profile --model "$M" --image "$IMG" --json --no-weight-cache)
if [ -z "${GPU_COMPARE_ONLY:-}" ]; then
  step profile-workgroup 120 "${PROF[@]}" --variant workgroup
  step profile-register 120 "${PROF[@]}" --variant register
fi
# The GGUF pair of the Qwen2.5-VL bench model (bench-qwen wrote the model) against the same model's
# bf16 -> q4 load: tessera run's loadMs, 8 tokens each, the order alternating between pairs.
QB=.cache/bench-models/qwen2_5_vl-3b-random
if [ -z "${GPU_SKIP_GGUF:-}${GPU_COMPARE_ONLY:-}" ] && [ -f .devcarry/gguf-convert-qwen.mjs ] && [ -d "$QB" ]; then
  step gguf-convert 240 node .devcarry/gguf-convert-qwen.mjs "$QB" /tmp/qwen-gguf Q4_K_M
  GG=(node dist/cli.js run --model /tmp/qwen-gguf/qwen2_5_vl-3b-random-Q4_K_M.gguf --image "$IMG" --prompt "$P" --max-tokens 8 --json --no-weight-cache)
  Q4=(node dist/cli.js run --model "$QB" --dtype q4 --image "$IMG" --prompt "$P" --max-tokens 8 --json --no-weight-cache)
  for i in 1 2; do
    if [ $(( i % 2 )) -eq 1 ]; then step "load-gguf-$i" 200 "${GG[@]}"; step "load-q4-$i" 200 "${Q4[@]}"
    else step "load-q4-$i" 200 "${Q4[@]}"; step "load-gguf-$i" 200 "${GG[@]}"; fi
  done
fi
node bench/gpu/summary.mjs "$OUT" | tee "$OUT/summary.txt"
tar -C "$OUT" -czf "$DEST/results.tar.gz" .
