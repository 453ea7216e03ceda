// A checkpoint directory on the local file system (Node).

import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ModelFileError } from '../errors';
import { checkCheckpointFileName } from './checkpoint-path';
import type { ByteStream, ModelSource } from './model-source';

export class NodeDirSource implements ModelSource {
  readonly where: string;
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
    this.where = this.dir;
  }

  private async size(name: string): Promise<number | undefined> {
    return (await this.stat(name))?.size;
  }

  private async stat(name: string): Promise<{ size: number; version: string } | undefined> {
    checkCheckpointFileName(name, this.where, 'the checkpoint'); // stay inside the directory
    try {
      const s = await stat(join(this.dir, name));
      return s.isFile() ? { size: s.size, version: `mtime:${s.mtimeMs}:ino:${s.ino}` } : undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new ModelFileError(`could not read ${join(this.dir, name)}: ${(e as Error).message}`, { cause: e });
    }
  }

  async exists(name: string): Promise<boolean> {
    return (await this.stat(name)) !== undefined;
  }

  async readText(name: string): Promise<string | undefined> {
    if ((await this.size(name)) === undefined) return undefined;
    return readFile(join(this.dir, name), 'utf8');
  }

  async openBytes(name: string): Promise<ByteStream | undefined> {
    const s = await this.stat(name);
    if (s === undefined) return undefined;
    const stream = createReadStream(join(this.dir, name), { highWaterMark: 1 << 20 }) as AsyncIterable<Uint8Array>;
    return { stream, sizeBytes: s.size, fromCache: true, version: s.version };
  }
}
