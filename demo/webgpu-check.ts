// The WebGPU check the demo runs on page load: is there a WebGPU API, does it give an adapter, and what
// is it. When something is missing, the notice says what to do for this browser (versions, flags), so a
// visitor is not left with a failed Load and an error name.

import { adapterName, describeAdapter } from '../src/gpu/adapter-info';

type WebGpuState = 'ok' | 'insecure' | 'no-api' | 'no-adapter' | 'error';

export interface WebGpuCheck {
  state: WebGpuState;
  title: string;
  detail: string;
  /** What to do, most likely first. */
  advice: string[];
  adapter?: { name: string; isCpu: boolean; features: string[] };
}

interface Browser {
  name: 'Chrome' | 'Edge' | 'Firefox' | 'Safari' | 'other';
  version: number;
  os: 'Windows' | 'macOS' | 'Linux' | 'Android' | 'iOS' | 'ChromeOS' | 'other';
}

export function parseBrowser(userAgent: string): Browser {
  const num = (re: RegExp) => Number(userAgent.match(re)?.[1] ?? 0);
  const os: Browser['os'] = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad|iPod/.test(userAgent)
      ? 'iOS'
      : /CrOS/.test(userAgent)
        ? 'ChromeOS'
        : /Windows/.test(userAgent)
          ? 'Windows'
          : /Mac OS X|Macintosh/.test(userAgent)
            ? 'macOS'
            : /Linux/.test(userAgent)
              ? 'Linux'
              : 'other';
  if (/Firefox\//.test(userAgent)) return { name: 'Firefox', version: num(/Firefox\/(\d+)/), os };
  if (/Edg\//.test(userAgent)) return { name: 'Edge', version: num(/Edg\/(\d+)/), os };
  if (/Chrom(e|ium)\//.test(userAgent)) return { name: 'Chrome', version: num(/Chrom(?:e|ium)\/(\d+)/), os };
  if (/Safari\//.test(userAgent) && /Version\//.test(userAgent)) return { name: 'Safari', version: num(/Version\/(\d+)/), os };
  return { name: 'other', version: 0, os };
}

/** What to do when this browser shows no navigator.gpu. */
export function adviceWithoutApi(b: Browser): string[] {
  const current = 'Or open this page in a current Chrome or Edge (113 or later), or Safari 26 or later.';
  switch (b.name) {
    case 'Chrome':
    case 'Edge':
      if (b.version > 0 && b.version < 113) return [`Update ${b.name}: this is version ${b.version}; WebGPU ships from version 113.`];
      if (b.os === 'Android')
        return [
          'Chrome on Android has WebGPU from version 121 on Android 12 or later with a supported GPU; update Chrome and Android.',
          current,
        ];
      if (b.os === 'Linux' || b.os === 'other') {
        return [
          `${b.name} on Linux may still ship WebGPU turned off: open chrome://flags/#enable-unsafe-webgpu, enable it (and #enable-vulkan), then relaunch.`,
          'Check chrome://gpu: the "WebGPU" line says whether it is enabled and why not.',
        ];
      }
      return [
        'Check chrome://gpu: the "WebGPU" line says whether it is enabled and why not (a blocklisted GPU or driver, or policy).',
        'Enable chrome://flags/#enable-unsafe-webgpu and relaunch.',
      ];
    case 'Firefox':
      return [
        'Firefox turns WebGPU on by default from version 141 on Windows; on other systems it may still be off: open about:config and set dom.webgpu.enabled to true, or use Firefox Nightly.',
        current,
      ];
    case 'Safari':
      return [
        'Safari has WebGPU from Safari 26 (macOS, iOS and iPadOS 26). On earlier versions enable it under Develop → Feature Flags → WebGPU (on iOS: Settings → Apps → Safari → Advanced → Feature Flags).',
        'Or use a current Chrome or Edge.',
      ];
    default:
      return ['Open this page in a current Chrome or Edge (113 or later), or Safari 26 or later.'];
  }
}

const ADVICE_NO_ADAPTER = [
  'The browser has WebGPU but gave no GPU adapter: the GPU or its driver may be blocklisted, or graphics acceleration is off.',
  'In Chrome or Edge, open chrome://gpu and read the "WebGPU" line; turn on Settings → System → "Use graphics acceleration when available"; update the GPU driver.',
  'To try anyway on a blocklisted GPU, enable chrome://flags/#enable-unsafe-webgpu and relaunch.',
  'On a machine without a GPU, Chromium can run WebGPU on the CPU (slowly) when started with --enable-unsafe-webgpu --enable-unsafe-swiftshader --use-webgpu-adapter=swiftshader.',
];

export async function checkWebGpu(
  env: { gpu: GPU | undefined; secure: boolean; userAgent: string } = {
    gpu: (navigator as Navigator & { gpu?: GPU }).gpu,
    secure: isSecureContext,
    userAgent: navigator.userAgent,
  },
): Promise<WebGpuCheck> {
  if (!env.secure) {
    return {
      state: 'insecure',
      title: 'WebGPU needs a secure page',
      detail: 'Browsers only offer WebGPU on https:// pages and on localhost; this page was opened over plain http.',
      advice: ['Open the demo over https://, or from localhost (npm run dev serves it there).'],
    };
  }
  if (!env.gpu) {
    return {
      state: 'no-api',
      title: 'This browser has no WebGPU',
      detail: 'navigator.gpu is missing, so the model cannot run here.',
      advice: adviceWithoutApi(parseBrowser(env.userAgent)),
    };
  }
  let adapter: GPUAdapter | null;
  try {
    adapter = await env.gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (e) {
    return {
      state: 'error',
      title: 'WebGPU failed to start',
      detail: `requestAdapter() threw: ${(e as Error).message}`,
      advice: ADVICE_NO_ADAPTER,
    };
  }
  if (!adapter) {
    return {
      state: 'no-adapter',
      title: 'WebGPU has no adapter',
      detail: 'navigator.gpu.requestAdapter() returned null.',
      advice: ADVICE_NO_ADAPTER,
    };
  }
  const r = describeAdapter(adapter, 'browser');
  const name = adapterName(r);
  return {
    state: 'ok',
    title: 'WebGPU is ready',
    detail: r.isCpu ? `${name}: a software (CPU) adapter, so expect everything to be slow.` : name,
    advice: [],
    adapter: { name, isCpu: r.isCpu, features: r.features },
  };
}

/** Fill the notice element: a one-line status when WebGPU works, an alert with what to do when not. */
export function renderWebGpuCheck(el: HTMLElement, c: WebGpuCheck): void {
  el.dataset.state = c.state;
  el.replaceChildren();
  const title = document.createElement('strong');
  title.textContent = c.title;
  const detail = document.createElement('span');
  detail.textContent = ` ${c.detail}`;
  el.append(title, detail);
  if (c.state === 'ok') {
    el.setAttribute('role', 'status');
    return;
  }
  el.setAttribute('role', 'alert');
  const list = document.createElement('ul');
  for (const a of c.advice) {
    const li = document.createElement('li');
    li.textContent = a;
    list.append(li);
  }
  el.append(list);
}
