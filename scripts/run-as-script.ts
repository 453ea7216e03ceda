// Whether a script file is the process's entry point, by name: `tsx scripts/<name>.ts`, or the one-file
// bundle bench/gpu/pack.sh writes as .devcarry/<name>.mjs. (Comparing import.meta.url with argv[1] is
// not enough: inside a bundle every module's import.meta.url is the bundle's, so a script bundled into
// another one would run its own main too.)
import { basename, extname } from 'node:path';

export function isScript(name: string): boolean {
  const entry = process.argv[1];
  return entry !== undefined && basename(entry, extname(entry)) === name;
}
