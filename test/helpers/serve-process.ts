// The built command (dist/cli.js) as a child process for tests and benchmarks: `tessera serve` started with
// --json, resolved once its 'ready' line names the URL (rejected if it exits first or takes too long); any
// other command run to its end (runBuiltCli).

import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

export const BUILT_CLI = resolve(import.meta.dirname, '../../dist/cli.js');

/**
 * `tessera <args>` to its end: its output, or a rejection when it fails or outlasts `timeoutMs` (killed then).
 * A new process compiles every pipeline again: minutes on a loaded 2-core machine, never forever. Callers
 * give their test a timeout above this one.
 */
export async function runBuiltCli(args: readonly string[], timeoutMs = 200_000): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [BUILT_CLI, ...args], { timeout: timeoutMs });
}

/** tessera serve's arguments for the tiny checkpoint at `model` on the CPU backend, served as 'tiny' on any port. */
export function tinyServeArgs(model: string): string[] {
  return ['--model', model, '--served-model-name', 'tiny', '--port', '0', '--device', 'cpu'];
}

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  /** Every --json line printed so far ('listening', 'ready', 'stopping'). */
  events: Array<{ event: string; url: string; device?: string }>;
  /** The exit code, once it exits. */
  exited: Promise<number | null>;
}

export async function startServeProcess(args: readonly string[], timeoutMs = 60_000): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BUILT_CLI, 'serve', ...args, '--json']);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const events: ServeProcess['events'] = [];
  let stderr = '';
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`tessera serve was not ready in ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      for (const line of d.split('\n')) {
        if (!line.startsWith('{')) continue;
        const e = JSON.parse(line) as ServeProcess['events'][number];
        events.push(e);
        if (e.event === 'ready') {
          clearTimeout(timer);
          res(e.url);
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`tessera serve exited with ${code}:\n${stderr}`));
    });
  });
  return { child, url, events, exited };
}
