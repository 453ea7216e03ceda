// Builds the package exactly as `npm pack` would (the prepack script: `npm run build`, JavaScript and
// declarations) before the consumer tests pack it with --ignore-scripts. Building here, before any test
// runs, keeps dist/ stable while the GPU tests (which also read it) may run beside these.

import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { cleanEnv } from './harness';

export default function setup(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: resolve(import.meta.dirname, '../..'), stdio: 'inherit', env: cleanEnv() });
}
