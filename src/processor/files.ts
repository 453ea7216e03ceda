// files.ts: how the processor reads a checkpoint's small text files (tokenizer.json, configs, chat template),
// wherever they live: under a URL, in browser File objects, or (node-files.ts) in a local directory.
// A reader answers `undefined` for a file that does not exist, so optional files need no try/catch.

import { ProcessorConfigError } from '../errors';

export interface ModelFiles {
  /** Human-readable origin for error messages (a URL, a directory, "3 selected files"). */
  readonly where: string;
  /** The file's text, or undefined when the checkpoint has no such file. Other failures throw. */
  readText(name: string): Promise<string | undefined>;
}

/**
 * Files under a base URL (a Hugging Face `resolve/main/` URL, or a static directory). A 404 means "absent";
 * other HTTP errors throw, so a flaky network is not mistaken for a missing chat template.
 */
export function urlFiles(baseUrl: string | URL, fetchFn: typeof fetch = fetch): ModelFiles {
  const base = String(baseUrl).endsWith('/') ? String(baseUrl) : `${String(baseUrl)}/`;
  return {
    where: base,
    async readText(name) {
      const url = new URL(name, base).toString();
      const res = await fetchFn(url);
      if (res.status === 404) return undefined;
      if (!res.ok) {
        throw new ProcessorConfigError(`fetching ${url} failed with HTTP ${res.status} ${res.statusText}; check the URL and network.`);
      }
      return await res.text();
    },
  };
}

/** Browser File objects (an <input type=file multiple> or a directory picker), matched by base name. */
export function fileListFiles(files: Iterable<File> | ArrayLike<File>): ModelFiles {
  const byName = new Map<string, File>();
  for (const f of Array.from(files as ArrayLike<File>)) byName.set(f.name.split('/').pop() ?? f.name, f);
  return {
    where: `${byName.size} selected files`,
    async readText(name) {
      const f = byName.get(name);
      return f ? await f.text() : undefined;
    },
  };
}

/** Files held in memory (tests, or files already fetched by the caller). */
export function memoryFiles(entries: Record<string, string>, where = 'in-memory files'): ModelFiles {
  return {
    where,
    async readText(name) {
      return Object.prototype.hasOwnProperty.call(entries, name) ? entries[name] : undefined;
    },
  };
}

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
