// The demo page's pure helpers: what the "Hugging Face" field accepts, and the WebGPU advice per browser.

import { describe, expect, it } from 'vitest';
import { modelUrlFromInput } from '../../demo/model-url';
import { adviceWithoutApi, parseBrowser } from '../../demo/webgpu-check';

const PAGE = 'http://localhost:5173/';
const RESOLVED = 'https://huggingface.co/HuggingFaceTB/SmolVLM-256M-Instruct/resolve/main/';

describe('modelUrlFromInput', () => {
  it('turns repo ids and Hub page URLs into resolve/<revision>/ bases', () => {
    expect(modelUrlFromInput('HuggingFaceTB/SmolVLM-256M-Instruct', PAGE)).toBe(RESOLVED);
    expect(modelUrlFromInput('  HuggingFaceTB/SmolVLM-256M-Instruct  ', PAGE)).toBe(RESOLVED);
    expect(modelUrlFromInput('https://huggingface.co/HuggingFaceTB/SmolVLM-256M-Instruct', PAGE)).toBe(RESOLVED);
    expect(modelUrlFromInput('https://huggingface.co/HuggingFaceTB/SmolVLM-256M-Instruct/resolve/main', PAGE)).toBe(RESOLVED);
    expect(modelUrlFromInput('https://huggingface.co/org/repo/tree/v2/sub', PAGE)).toBe('https://huggingface.co/org/repo/resolve/v2/sub/');
    expect(modelUrlFromInput('https://huggingface.co/org/repo?x=1#y', PAGE)).toBe('https://huggingface.co/org/repo/resolve/main/');
  });

  it('keeps other URLs and paths as checkpoint folders', () => {
    expect(modelUrlFromInput('https://models.example.com/smolvlm', PAGE)).toBe('https://models.example.com/smolvlm/');
    expect(modelUrlFromInput('/models/smolvlm-tiny', PAGE)).toBe('http://localhost:5173/models/smolvlm-tiny/');
    expect(modelUrlFromInput('./models/smolvlm-tiny/', PAGE)).toBe('http://localhost:5173/models/smolvlm-tiny/');
  });

  it('keeps a .gguf file as the file (a GGUF model), a Hub blob link as its resolve/ URL', () => {
    expect(modelUrlFromInput('https://models.example.com/x/SmolVLM-256M-Instruct-Q8_0.gguf', PAGE)).toBe(
      'https://models.example.com/x/SmolVLM-256M-Instruct-Q8_0.gguf',
    );
    expect(
      modelUrlFromInput('https://huggingface.co/ggml-org/SmolVLM-256M-Instruct-GGUF/blob/main/SmolVLM-256M-Instruct-Q8_0.gguf', PAGE),
    ).toBe('https://huggingface.co/ggml-org/SmolVLM-256M-Instruct-GGUF/resolve/main/SmolVLM-256M-Instruct-Q8_0.gguf');
  });

  it('refuses what is neither', () => {
    expect(modelUrlFromInput('', PAGE)).toBeUndefined();
    expect(modelUrlFromInput('just words', PAGE)).toBeUndefined();
    expect(modelUrlFromInput('ftp://example.com/model/', PAGE)).toBeUndefined();
    expect(modelUrlFromInput('https://huggingface.co/org/repo/blob/main/config.json', PAGE)).toBeUndefined();
  });
});

describe('WebGPU advice without navigator.gpu', () => {
  const UA = {
    chromeLinux: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36',
    chromeOld: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/110.0.0.0 Safari/537.36',
    edgeWin:
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0',
    chromeAndroid: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36',
    firefox: 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0',
    safari17: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  };

  it('reads the browser, version and system from the user agent', () => {
    expect(parseBrowser(UA.chromeLinux)).toEqual({ name: 'Chrome', version: 142, os: 'Linux' });
    expect(parseBrowser(UA.edgeWin)).toEqual({ name: 'Edge', version: 142, os: 'Windows' });
    expect(parseBrowser(UA.chromeAndroid)).toEqual({ name: 'Chrome', version: 142, os: 'Android' });
    expect(parseBrowser(UA.firefox)).toEqual({ name: 'Firefox', version: 140, os: 'Linux' });
    expect(parseBrowser(UA.safari17)).toEqual({ name: 'Safari', version: 17, os: 'macOS' });
  });

  it('says what to do for each', () => {
    expect(adviceWithoutApi(parseBrowser(UA.chromeLinux))[0]).toContain('chrome://flags/#enable-unsafe-webgpu');
    expect(adviceWithoutApi(parseBrowser(UA.chromeOld))[0]).toContain('Update Chrome: this is version 110');
    expect(adviceWithoutApi(parseBrowser(UA.edgeWin)).join(' ')).toContain('chrome://gpu');
    expect(adviceWithoutApi(parseBrowser(UA.chromeAndroid))[0]).toContain('Android 12');
    expect(adviceWithoutApi(parseBrowser(UA.firefox))[0]).toContain('dom.webgpu.enabled');
    expect(adviceWithoutApi(parseBrowser(UA.safari17))[0]).toContain('Feature Flags');
    expect(adviceWithoutApi(parseBrowser('curl/8.0'))[0]).toContain('Safari 26');
  });
});
