// node-files.ts: ModelFiles over a local directory (Node only; browser code never imports this file).

import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ModelFiles } from './files';

export function directoryFiles(dir: string): ModelFiles {
  const root = resolve(dir);
  return {
    where: root,
    async readText(name) {
      if (name.includes('..') || name.startsWith('/')) return undefined;
      try {
        return await readFile(join(root, name), 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
    },
  };
}
