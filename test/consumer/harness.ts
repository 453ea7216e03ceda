// Running things in the consumer app the tests generate: commands (with the time each took), Vite servers
// on a free port, and the app's page in headless Chromium (flags from scripts/chromium.ts).

import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { chromium } from '@playwright/test';
import { chromiumLaunchOptions } from '../../scripts/chromium';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The environment for commands in the app: npm's lifecycle variables of the outer `npm test` removed,
 *  so a nested npm works on the app's folder and not on this repository. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    const keep = !k.startsWith('npm_') || k === 'npm_config_cache' || k === 'npm_config_registry' || k === 'npm_config_userconfig';
    if (keep && k !== 'INIT_CWD') env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Run a command to completion (never throws on a non-zero exit; the caller checks `code`). */
export function run(cmd: string, args: string[], cwd: string, env = cleanEnv(), timeoutMs = 240_000): Promise<CommandResult> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

export interface ExitAfterOutput extends CommandResult {
  /** From the first stdout line to the process's exit (undefined: it was still running and was killed). */
  exitAfterOutputMs?: number;
}

/**
 * Run a program (Node, or `command`) that prints one line when its work is done and should then exit by
 * itself: if it is still running `graceMs` after that line, it is killed and `exitAfterOutputMs` is undefined.
 */
export function runExpectingExit(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  graceMs: number,
  timeoutMs: number,
  command = process.execPath,
): Promise<ExitAfterOutput> {
  const t0 = performance.now();
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let printedAt: number | undefined;
  let killed = false;
  const kill = () => {
    killed = true;
    child.kill('SIGKILL');
  };
  const overall = setTimeout(kill, timeoutMs);
  let grace: NodeJS.Timeout | undefined;
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => {
    stdout += d;
    if (printedAt === undefined && stdout.includes('\n')) {
      printedAt = performance.now();
      grace = setTimeout(kill, graceMs);
    }
  });
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(overall);
      clearTimeout(grace);
      const end = performance.now();
      resolve({
        code: code ?? 1,
        stdout,
        stderr,
        ms: end - t0,
        exitAfterOutputMs: killed || printedAt === undefined ? undefined : end - printedAt,
      });
    });
  });
}

/** `code` 0, or an error that shows what the command printed. */
export function expectSuccess(r: CommandResult, what: string): CommandResult {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface Server {
  url: string;
  output: () => string;
  stop: () => void;
}

/** Start `vite <args>` in the app on a free port and wait until it answers. */
export function startVite(appDir: string, args: string[]): Promise<Server> {
  return startServer(appDir, `vite ${args.join(' ')}`, (port) => [
    'node_modules/vite/bin/vite.js',
    ...args,
    '--port',
    String(port),
    '--strictPort',
  ]);
}

/** Start `next start <dir>` (a built Next.js app in the app's folder `dir`) on a free port and wait until it answers. */
export function startNext(appDir: string, dir: string): Promise<Server> {
  return startServer(appDir, `next start ${dir}`, (port) => ['node_modules/next/dist/bin/next', 'start', dir, '--port', String(port)]);
}

/** Start a Node server (`argv(port)`, run in the app) on a free port and wait until it answers. */
async function startServer(appDir: string, label: string, argv: (port: number) => string[]): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, argv(port), {
    cwd: appDir,
    env: cleanEnv({ NEXT_TELEMETRY_DISABLED: '1' }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const server: Server = {
    url: `http://127.0.0.1:${port}/`,
    output: () => output,
    stop: () => {
      // The server's own process group (it was started detached): the server and anything it started.
      if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    },
  };
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    if (child.exitCode !== null) throw new Error(`${label} exited:\n${output}`);
    const ok = await fetch(server.url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return server;
    await new Promise((r) => setTimeout(r, 200));
  }
  server.stop();
  throw new Error(`${label} did not answer within 60 s:\n${output}`);
}

export interface PageOutcome {
  tokenIds?: number[];
  text?: string;
  encoderMode?: string;
  backend?: string;
  badNames?: string[];
  /** With ?json: the response_format answer. */
  json?: string;
  error?: { name: string; message: string };
  /** Uncaught page errors and failed requests, for the failure message. */
  log: string[];
  ms: number;
}

/** Open the app's page and wait for its window.consumer outcome. */
export async function openApp(url: string): Promise<PageOutcome> {
  const t0 = performance.now();
  const browser = await chromium.launch(chromiumLaunchOptions());
  try {
    const page = await browser.newPage();
    const log: string[] = [];
    page.on('pageerror', (e) => log.push(`page error: ${e.message}`));
    page.on('response', (r) => void (r.status() >= 400 && log.push(`HTTP ${r.status()} ${r.url()}`)));
    await page.goto(url);
    await page.waitForFunction(() => window.consumer !== undefined, null, { timeout: 240_000 });
    const outcome = await page.evaluate(() => window.consumer);
    return { ...outcome, log, ms: performance.now() - t0 };
  } finally {
    await browser.close();
  }
}

declare global {
  interface Window {
    consumer?: Omit<PageOutcome, 'log' | 'ms'>;
  }
}
