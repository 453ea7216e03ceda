// A UrlSource that knows its folder's files (given, or listed by the Hugging Face Hub's tree API) never
// requests a file that is absent, so loading logs no 404s; without a listing (other hosts, or the Hub's
// API unreachable) it probes as before.

import { describe, expect, it } from 'vitest';
import { hubTreeUrl, listHubFiles } from '../../src/io/file-listing';
import { UrlSource } from '../../src/io/model-source';

const HUB = 'https://huggingface.co/HuggingFaceTB/SmolVLM-256M-Instruct/resolve/main/';
const TREE = 'https://huggingface.co/api/models/HuggingFaceTB/SmolVLM-256M-Instruct/tree/main';

// The tree API's answer shape: files and directories, paths from the repository root, LFS files with an lfs block.
const ROOT_ENTRIES = [
  { type: 'file', oid: 'a1', size: 1519, path: '.gitattributes' },
  { type: 'file', oid: 'a2', size: 7353, path: 'config.json' },
  { type: 'file', oid: 'a3', size: 429, path: 'chat_template.json' },
  { type: 'file', oid: 'a4', size: 3548256, path: 'tokenizer.json' },
  { type: 'file', oid: 'a5', size: 513028808, path: 'model.safetensors', lfs: { oid: '74dea590', size: 513028808, pointerSize: 135 } },
  { type: 'directory', oid: 'a6', size: 0, path: 'onnx' },
];

/** A fetch that answers from a table and records every URL asked for (404 for the rest). */
function fakeFetch(table: Record<string, () => Response>) {
  const calls: string[] = [];
  const impl = (async (input: string | URL | Request) => {
    const url = String(input instanceof Request ? input.url : input);
    calls.push(url);
    const answer = table[url];
    return answer ? answer() : new Response('Not Found', { status: 404 });
  }) as typeof fetch;
  return { calls, impl };
}

const json =
  (v: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(v), { headers: { 'content-type': 'application/json', ...headers } });
const text = (v: string) => () => new Response(v, { headers: { 'content-type': 'application/json' } });

describe('hubTreeUrl', () => {
  it('maps resolve/<revision>/ URLs of model repos to the tree API, folders and encoded revisions kept', () => {
    expect(hubTreeUrl(HUB)).toBe(TREE);
    expect(hubTreeUrl('https://huggingface.co/org/repo/resolve/main')).toBe('https://huggingface.co/api/models/org/repo/tree/main');
    expect(hubTreeUrl('https://huggingface.co/org/repo/resolve/refs%2Fpr%2F3/sub/dir/')).toBe(
      'https://huggingface.co/api/models/org/repo/tree/refs%2Fpr%2F3/sub/dir',
    );
    expect(hubTreeUrl('https://hf.co/org/repo/resolve/v1.0/')).toBe('https://hf.co/api/models/org/repo/tree/v1.0');
  });

  it('leaves every other URL alone', () => {
    expect(hubTreeUrl('http://localhost:5173/models/smolvlm-tiny/')).toBeUndefined();
    expect(hubTreeUrl('https://example.com/org/repo/resolve/main/')).toBeUndefined();
    expect(hubTreeUrl('https://huggingface.co/org/repo/blob/main/')).toBeUndefined();
    expect(hubTreeUrl('https://huggingface.co/datasets/org/repo/resolve/main/')).toBeUndefined();
    expect(hubTreeUrl('/models/smolvlm-tiny/')).toBeUndefined();
  });
});

/** The names of a listing (or undefined). */
const names = (files: { name: string }[] | undefined) => files?.map((f) => f.name);

describe('listHubFiles', () => {
  it('lists the files of the folder, not its directories, with their sizes (an LFS file: its lfs.size)', async () => {
    const f = fakeFetch({ [TREE]: json(ROOT_ENTRIES) });
    expect(await listHubFiles(HUB, f.impl)).toEqual([
      { name: '.gitattributes', sizeBytes: 1519 },
      { name: 'config.json', sizeBytes: 7353 },
      { name: 'chat_template.json', sizeBytes: 429 },
      { name: 'tokenizer.json', sizeBytes: 3548256 },
      { name: 'model.safetensors', sizeBytes: 513028808 },
    ]);
    expect(f.calls).toEqual([TREE]);
  });

  it('names files relative to a subfolder', async () => {
    const base = 'https://huggingface.co/org/repo/resolve/main/checkpoints/v2/';
    const tree = 'https://huggingface.co/api/models/org/repo/tree/main/checkpoints/v2';
    const f = fakeFetch({
      [tree]: json([
        { type: 'file', path: 'checkpoints/v2/config.json' },
        { type: 'directory', path: 'checkpoints/v2/x' },
      ]),
    });
    expect(await listHubFiles(base, f.impl)).toEqual([{ name: 'config.json' }]); // no size given: none claimed
  });

  it('follows the Link header to the next page', async () => {
    const page2 = `${TREE}?cursor=abc`;
    const f = fakeFetch({
      [TREE]: json(ROOT_ENTRIES.slice(0, 2), { link: `<${page2}>; rel="next"` }),
      [page2]: json(ROOT_ENTRIES.slice(2)),
    });
    expect(names(await listHubFiles(HUB, f.impl))).toEqual([
      '.gitattributes',
      'config.json',
      'chat_template.json',
      'tokenizer.json',
      'model.safetensors',
    ]);
    expect(f.calls).toEqual([TREE, page2]);
  });

  it('is undefined (probe instead) when the API fails, answers nonsense, or never stops paging', async () => {
    expect(await listHubFiles(HUB, fakeFetch({}).impl)).toBeUndefined(); // 404: private, gated, renamed
    expect(await listHubFiles(HUB, fakeFetch({ [TREE]: text('<html>') }).impl)).toBeUndefined();
    expect(await listHubFiles(HUB, fakeFetch({ [TREE]: json({ error: 'x' }) }).impl)).toBeUndefined();
    const offline = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof fetch;
    expect(await listHubFiles(HUB, offline)).toBeUndefined();
    const endless = (async () => new Response('[]', { headers: { link: `<${TREE}?cursor=again>; rel="next"` } })) as typeof fetch;
    expect(await listHubFiles(HUB, endless)).toBeUndefined();
  });
});

describe('UrlSource with a file listing', () => {
  it('given files: an unlisted file is absent without a request, a listed one is fetched', async () => {
    const base = 'http://localhost:5173/models/smolvlm-tiny/';
    const f = fakeFetch({ [`${base}chat_template.json`]: text('{"chat_template":"x"}') });
    const source = new UrlSource(base, {
      useCache: false,
      fetchImpl: f.impl,
      files: ['config.json', 'chat_template.json', 'model.safetensors'],
    });
    expect(await source.readText('chat_template.jinja')).toBeUndefined();
    expect(await source.openBytes('model.safetensors.index.json')).toBeUndefined();
    expect(await source.readText('chat_template.json')).toBe('{"chat_template":"x"}');
    expect(f.calls).toEqual([`${base}chat_template.json`]);
    expect(await source.knownFiles()).toEqual(['config.json', 'chat_template.json', 'model.safetensors']);
  });

  it('a Hugging Face URL is listed once through the Hub API; absent files are never requested', async () => {
    const f = fakeFetch({ [TREE]: json(ROOT_ENTRIES), [`${HUB}config.json`]: text('{}'), [`${HUB}chat_template.json`]: text('{}') });
    const source = new UrlSource(HUB, { useCache: false, fetchImpl: f.impl });
    expect(await source.readText('config.json')).toBe('{}');
    expect(await source.readText('chat_template.jinja')).toBeUndefined();
    expect(await source.readText('processor_config.json')).toBeUndefined();
    expect(await source.openBytes('model.safetensors.index.json')).toBeUndefined();
    expect(await source.readText('chat_template.json')).toBe('{}');
    expect(f.calls).toEqual([TREE, `${HUB}config.json`, `${HUB}chat_template.json`]);
  });

  it('when the Hub API is unreachable it probes every file as before', async () => {
    const f = fakeFetch({ [`${HUB}config.json`]: text('{}') });
    const source = new UrlSource(HUB, { useCache: false, fetchImpl: f.impl });
    expect(await source.readText('config.json')).toBe('{}');
    expect(await source.readText('chat_template.jinja')).toBeUndefined();
    expect(f.calls).toEqual([TREE, `${HUB}config.json`, `${HUB}chat_template.jinja`]);
    expect(await source.knownFiles()).toBeUndefined();
  });

  it('other hosts are probed: no listing request, a 404 means absent', async () => {
    const base = 'https://models.example.com/smolvlm/';
    const f = fakeFetch({ [`${base}config.json`]: text('{}') });
    const source = new UrlSource(base, { useCache: false, fetchImpl: f.impl });
    expect(await source.readText('config.json')).toBe('{}');
    expect(await source.readText('chat_template.jinja')).toBeUndefined();
    expect(f.calls).toEqual([`${base}config.json`, `${base}chat_template.jinja`]);
  });

  it('listHub: false turns the Hub listing off', async () => {
    const f = fakeFetch({ [TREE]: json(ROOT_ENTRIES) });
    const source = new UrlSource(HUB, { useCache: false, fetchImpl: f.impl, listHub: false });
    expect(await source.readText('chat_template.jinja')).toBeUndefined();
    expect(f.calls).toEqual([`${HUB}chat_template.jinja`]);
  });
});
