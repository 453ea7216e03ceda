// One run of the `ffmpeg` program, shared by the Node video and audio decoders: spawned without stdin,
// its stdout left to the caller (read whole, or streamed), the end of its stderr kept for the error, and
// a program that cannot be started reported as FfmpegMissingError, which says what to install.

import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { FfmpegMissingError } from '../errors';

export interface FfmpegRun {
  stdout: Readable;
  /** Resolves with the exit code (null when killed); rejects with FfmpegMissingError when not started. */
  exited: Promise<number | null>;
  /** The last lines ffmpeg wrote to stderr, joined with " / " ('no message' when none). */
  why(): string;
  kill(): void;
}

/** Start `command` with `args`; `purpose` picks the FfmpegMissingError's advice. */
export function startFfmpeg(command: string, args: string[], purpose: 'video' | 'audio'): FfmpegRun {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'ENOENT' || e.code === 'EACCES' ? new FfmpegMissingError(command, e.message, purpose) : e),
    );
    child.on('close', (code) => resolve(code));
  });
  exited.catch(() => {}); // the caller awaits it; a run that never started also ends its stdout
  return {
    stdout: child.stdout,
    exited,
    why: () => stderr.trim().split('\n').slice(-2).join(' / ') || 'no message',
    kill: () => void child.kill('SIGKILL'),
  };
}
