#!/usr/bin/env node
// Installs what `npm start`, `npm test` and the benchmarks need, and nothing when it is already there:
//   1. npm packages (npm ci) when node_modules is missing or older than package-lock.json
//   2. a browser with software WebGPU for the Playwright tests and benchmarks, and a Vulkan loader plus
//      SwiftShader for Dawn in Node: Debian's `chromium` and `libvulkan1`, via apt when running as root;
//      and Debian's `ffmpeg`, which Tessera runs in Node to decode MP4/WebM video (the video tests need it).
// Plain Node with no dependencies, because it runs before any are installed.
// Set TESSERA_SKIP_SETUP=1 to skip it, CHROME_PATH to use another Chromium.

import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => console.error(`[setup] ${msg}`);

function run(cmd, env = {}) {
  execSync(cmd, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
}

function npmPackagesReady() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(marker)) return false;
  return statSync(marker).mtimeMs >= statSync(join(root, 'package-lock.json')).mtimeMs;
}

function hasVulkanLoader() {
  try {
    return execSync('/sbin/ldconfig -p', { encoding: 'utf8' }).includes('libvulkan.so.1');
  } catch {
    return existsSync('/usr/lib/x86_64-linux-gnu/libvulkan.so.1') || existsSync('/usr/lib/aarch64-linux-gnu/libvulkan.so.1');
  }
}

function hasProgram(name) {
  return (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, name)));
}

function chromiumPath() {
  if (process.env.CHROME_PATH && existsSync(process.env.CHROME_PATH)) return process.env.CHROME_PATH;
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
}

if (process.env.TESSERA_SKIP_SETUP === '1') process.exit(0);

if (!npmPackagesReady()) {
  say('installing npm packages (npm ci)');
  // onnxruntime-node (pulled in by @huggingface/transformers) would download binaries; this project
  // never uses it, so its install step is skipped.
  run('npm ci --no-audit --no-fund', { ONNXRUNTIME_NODE_INSTALL: 'skip', npm_config_onnxruntime_node_install: 'skip' });
}

if (process.platform === 'linux') {
  const missing = [];
  if (!chromiumPath()) missing.push('chromium');
  if (!hasVulkanLoader()) missing.push('libvulkan1');
  if (!hasProgram('ffmpeg')) missing.push('ffmpeg');
  if (missing.length > 0) {
    const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    if (isRoot && existsSync('/usr/bin/apt-get')) {
      say(`installing ${missing.join(' ')} with apt-get (software WebGPU: SwiftShader)`);
      run('apt-get update -qq', { DEBIAN_FRONTEND: 'noninteractive' });
      run(`apt-get install -y -qq --no-install-recommends ${missing.join(' ')}`, { DEBIAN_FRONTEND: 'noninteractive' });
    } else {
      say(
        `missing: ${missing.join(', ')}. Install them (Debian/Ubuntu: sudo apt-get install ${missing.join(' ')}) ` +
          'or set CHROME_PATH to a Chromium; browser tests and Dawn-on-CPU need them, and the video tests need ffmpeg.',
      );
      process.exit(1);
    }
  }
}
