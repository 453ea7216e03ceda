// Web Worker entry: runs the kernel self-check on the worker's own GPUDevice. Wiring only.

import * as Comlink from 'comlink';
import type { SelfCheckWorkerApi } from '../src/protocol/selfcheck';
import { runBrowserSelfCheck } from '../src/selfcheck/self-check';

const api: SelfCheckWorkerApi = {
  run: (onResult) => runBrowserSelfCheck(onResult),
};

Comlink.expose(api);
