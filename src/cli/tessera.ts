#!/usr/bin/env node
// The `tessera` command line.
//   tessera run --model <dir|url> --image <file> --prompt "..." [--max-tokens N] [--temperature T] [--json]
//   tessera profile --model <dir|url> --image <file> [--prompt "..."] [--dtype ...] [--timing ...] [--json]
//   tessera serve --model <dir|url> [--host H] [--port N] [--api-key KEY] [--allowed-origins A,B] ...
//   tessera doctor [--json] [--variant register|workgroup]
//   tessera pack --model <dir> --dtype f16|q8|q4 --out <dir>
// Arguments: args.ts (usage errors before anything loads). Failures: report-error.ts (one line per error,
// stacks with --verbose).

import { doctor } from './doctor';
import { createNodeGpuContext } from '../gpu/node';
import { parseCliArgs, USAGE, wantsVerbose, type CliArgs } from './args';
import { pack } from './pack';
import { profile } from './profile';
import { exitCodeFor, formatCliError } from './report-error';
import { run } from './run';
import { serve } from './serve';

async function main(args: CliArgs): Promise<number> {
  if (args.command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (args.command === 'run') {
    return run({
      ...args,
      out: (t) => process.stdout.write(t),
      err: (t) => process.stderr.write(t),
    });
  }
  if (args.command === 'profile') {
    return profile({
      ...args,
      out: (t) => process.stdout.write(t),
      err: (t) => process.stderr.write(t),
    });
  }
  if (args.command === 'serve') return serve({ ...args, err: (t) => process.stderr.write(t) });
  if (args.command === 'pack') return pack({ ...args, err: (t) => process.stderr.write(t) });
  const gpu = await createNodeGpuContext({ kernelVariant: args.variant });
  try {
    const lines: string[] = [];
    const print = args.json ? (l: string) => lines.push(l) : (l: string) => console.log(l);
    const result = await doctor(gpu, print);
    if (args.json) console.log(JSON.stringify({ adapter: gpu.adapter, ...result }));
    return result.pass ? 0 : 1;
  } finally {
    gpu.destroy();
  }
}

const argv = process.argv.slice(2);
Promise.resolve()
  .then(() => main(parseCliArgs(argv)))
  .then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(formatCliError(e, wantsVerbose(argv)));
      process.exit(exitCodeFor(e));
    },
  );
