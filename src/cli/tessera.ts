#!/usr/bin/env node
// The `tessera` command line.
//   tessera doctor [--json] [--variant register|workgroup]

import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TesseraError } from '../errors';
import type { KernelVariant } from '../gpu/adapter-info';
import { createNodeGpuContext } from '../gpu/node';
import { doctor } from './doctor';

const USAGE = `usage: tessera <command> [options]

commands
  doctor     report the WebGPU adapter and run every kernel against its CPU reference

options
  --json                       print one JSON object instead of the readable report
  --variant register|workgroup force a kernel variant instead of the adapter's choice
  -h, --help                   show this help`;

/**
 * Dawn's Linux build loads libwayland-client, which prints "XDG_RUNTIME_DIR is invalid" on every start
 * when the variable is unset (headless machines, CI). Give it a private directory so the CLI's output
 * is only Tessera's.
 */
function quietWayland(): void {
  if (process.platform !== 'linux' || process.env.XDG_RUNTIME_DIR) return;
  const dir = join(tmpdir(), `tessera-runtime-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  process.env.XDG_RUNTIME_DIR = dir;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      variant: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  if (command !== 'doctor') {
    console.error(`tessera: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  }
  const variant = values.variant as KernelVariant | undefined;
  if (variant && variant !== 'register' && variant !== 'workgroup') {
    console.error(`tessera: --variant must be 'register' or 'workgroup', got '${variant}'`);
    return 2;
  }
  quietWayland();
  const gpu = await createNodeGpuContext({ kernelVariant: variant });
  try {
    const lines: string[] = [];
    const print = values.json ? (l: string) => lines.push(l) : (l: string) => console.log(l);
    const result = await doctor(gpu, print);
    if (values.json) console.log(JSON.stringify({ adapter: gpu.adapter, ...result }));
    return result.pass ? 0 : 1;
  } finally {
    gpu.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof TesseraError) console.error(`tessera: ${e.name}: ${e.message}`);
    else console.error(e);
    process.exit(1);
  },
);
