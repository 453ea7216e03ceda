// `--baseline=<git-ref>` for the benchmarks: the same suite run on another tree of this repository, so that
// a change is measured against the tree before it in the same run (same machine, same hour). The tree is a
// git worktree under .cache/baseline/<sha>, with its own npm packages (installed once, with the install
// steps its own scripts/setup.mjs takes); the suite is its own `npm run <script>`, and its figures are the
// JSON line it prints last. Nothing of the baseline's output is trusted beyond that line.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export class BaselineError extends Error {
  override readonly name = 'BaselineError';
}

export interface BaselineRun<T> {
  /** The ref as given and the commit it named. */
  ref: string;
  sha: string;
  /** The baseline suite's JSON line. */
  result: T;
  seconds: number;
}

function git(repoRoot: string, args: string[]): string {
  const r = spawnSync('git', args, { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0) throw new BaselineError(`git ${args.join(' ')} failed: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout.trim();
}

/** The worktree of `ref` (made on first use). */
export function baselineTree(repoRoot: string, ref: string): { sha: string; dir: string } {
  const sha = git(repoRoot, ['rev-parse', '--verify', `${ref}^{commit}`]);
  const dir = join(repoRoot, '.cache', 'baseline', sha.slice(0, 12));
  if (!existsSync(join(dir, 'package.json'))) {
    mkdirSync(join(repoRoot, '.cache', 'baseline'), { recursive: true });
    git(repoRoot, ['worktree', 'prune']);
    git(repoRoot, ['worktree', 'add', '--detach', dir, sha]);
  }
  return { sha, dir };
}

/**
 * Run `npm run <script> -- <args>` in the baseline tree, streaming its lines with a "[baseline]" prefix,
 * and return the JSON line it printed last. Its own scripts/setup.mjs installs its npm packages.
 */
export async function runBaseline<T>(
  repoRoot: string,
  ref: string,
  script: string,
  args: readonly string[],
  log: (line: string) => void,
): Promise<BaselineRun<T>> {
  const { sha, dir } = baselineTree(repoRoot, ref);
  log(`baseline ${ref} (${sha.slice(0, 12)}) in ${dir}: npm run ${script} -- ${args.join(' ')}`);
  const t0 = Date.now();
  const lines: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('npm', ['run', script, '--', ...args], {
      cwd: dir,
      env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip', npm_config_onnxruntime_node_install: 'skip' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let pending = '';
    const onData = (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        // The baseline's JSON line is long and printed again by the caller's report; the rest is progress.
        if (!line.startsWith('{')) console.log(`[baseline] ${line}`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (c) => {
      if (pending) lines.push(pending);
      resolve(c);
    });
  });
  const json = [...lines].reverse().find((l) => l.startsWith('{'));
  if (code !== 0 || !json)
    throw new BaselineError(
      `the baseline ${ref} (${sha.slice(0, 12)}) exited with ${code} and ${json ? 'a' : 'no'} JSON line; its output is above`,
    );
  return { ref, sha, result: JSON.parse(json) as T, seconds: (Date.now() - t0) / 1000 };
}
