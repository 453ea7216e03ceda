// Messages between the page and workers/selfcheck.worker.ts (types only; comlink carries the calls).

import type { AdapterReport } from '../gpu/adapter-info';
import type { CaseResult } from '../selfcheck/runner';

export interface SelfCheckReport {
  adapter: AdapterReport;
  results: CaseResult[];
}

export interface SelfCheckWorkerApi {
  /** Create a GPU device in the worker, run every default kernel case, destroy the device. */
  run(onResult?: (result: CaseResult, index: number, total: number) => void): Promise<SelfCheckReport>;
}
