// files.ts: how the processor reads a checkpoint's small text files (tokenizer.json, configs, chat template),
// through a src/io ModelSource wherever they live: under a URL, in browser File objects, in a directory.
// A reader answers `undefined` for a file that does not exist, so optional files need no try/catch.

import { ProcessorConfigError } from '../errors';
import type { ModelSource } from '../io/model-source';

/** What the processor needs of a checkpoint: its small text files (any src/io ModelSource will do). */
export type ModelFiles = Pick<ModelSource, 'where' | 'readText'>;

/** Reads and parses a JSON file; undefined when absent, ProcessorConfigError when it is not JSON. */
export async function readJson(files: ModelFiles, name: string): Promise<Record<string, unknown> | undefined> {
  const text = await files.readText(name);
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ProcessorConfigError(`${name} in ${files.where} is not valid JSON (${(e as Error).message}); download it again.`, {
      cause: e,
    });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ProcessorConfigError(`${name} in ${files.where} is not a JSON object.`);
  }
  return value as Record<string, unknown>;
}

/** Like readJson, but the file must exist. */
export async function requireJson(files: ModelFiles, name: string, why: string): Promise<Record<string, unknown>> {
  const v = await readJson(files, name);
  if (!v) throw new ProcessorConfigError(`${name} is missing from ${files.where}; it is needed ${why}.`);
  return v;
}
