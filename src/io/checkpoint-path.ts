// Which file names a checkpoint may use. A checkpoint from a URL is data, not code: a sharded index's
// weight_map is written by whoever published it, and `new URL(name, base)` or `join(dir, name)` with a
// name like "../../other-repo/resolve/main/x", "/etc/passwd" or "https://elsewhere.example/x" would
// reach other repositories, other hosts or other folders. Names are relative paths made of plain segments
// (letters, digits, '.', '_', '-', '+'; no '.' or '..' segment), so they always stay under the base.

import { CheckpointFormatError } from '../errors';

const SEGMENT = /^[A-Za-z0-9._+-]+$/;
const MAX_NAME_CHARS = 512;

function isCheckpointFileName(name: string): boolean {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_CHARS) return false;
  return name.split('/').every((s) => SEGMENT.test(s) && s !== '.' && s !== '..');
}

/** Throws CheckpointFormatError unless `name` stays under the checkpoint's base; `context` says who named it. */
export function checkCheckpointFileName(name: string, where: string, context: string): void {
  if (isCheckpointFileName(name)) return;
  throw new CheckpointFormatError(
    `${context} names the file ${JSON.stringify(name)}, which is not a plain relative path under ${where}; ` +
      "a checkpoint may only name its own files (letters, digits, '.', '_', '-', '+' and '/' between folders, no '..'). " +
      'The checkpoint is malformed or crafted.',
  );
}
