// Which files a checkpoint under a URL has, when that is knowable without probing. Loading asks for
// optional files (chat_template.jinja, model.safetensors.index.json, processor_config.json, ...); probing
// a URL for one that is absent costs a request and, in a browser, a red "404 (Not Found)" line in the
// console for every load. With a listing, UrlSource skips those requests.
//
// Listings come from the caller (e.g. the demo's public/models/manifest.json) or, for Hugging Face
// `resolve/<revision>/` URLs, from the Hub's tree API:
//
//   https://huggingface.co/<owner>/<repo>/resolve/<revision>/<folder/>
//   └─► https://huggingface.co/api/models/<owner>/<repo>/tree/<revision>/<folder>
//       [{ "type": "file", "path": "<folder/>config.json", "size": 7408, ... }, { "type": "directory", ... }]
//
// The listing keeps each file's size (an LFS file's `lfs.size`, else `size`): what downloading it costs in
// bytes, which the storage check (src/storage/download-plan.ts) adds up before a download starts.
//
// Any other host keeps the old behaviour (probe, and treat 404 as "absent").

/** Hosts that serve the Hub's `resolve/` and `api/models/.../tree/` routes. */
const HUB_HOSTS = new Set(['huggingface.co', 'hf.co']);

/** The tree-API URL listing the folder a Hub `resolve/<revision>/` URL points at; undefined for other URLs. */
export function hubTreeUrl(base: string): string | undefined {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return undefined;
  }
  if (!HUB_HOSTS.has(url.hostname)) return undefined;
  // Model repos only: /<owner>/<repo>/resolve/<revision>[/<folder>...]/ (datasets and spaces start with
  // their type and are not checkpoints). The revision stays percent-encoded (refs%2Fpr%2F1).
  const parts = url.pathname.split('/').filter((p) => p !== '');
  if (parts.length < 4 || parts[2] !== 'resolve' || parts[0] === 'datasets' || parts[0] === 'spaces') return undefined;
  const [owner, repo, , revision, ...folder] = parts;
  const path = folder.length > 0 ? `/${folder.join('/')}` : '';
  return `${url.origin}/api/models/${owner}/${repo}/tree/${revision}${path}`;
}

interface TreeEntry {
  type: string;
  path: string;
  size?: number;
  lfs?: { size?: number };
}

/** A file of a listed folder: its name relative to the folder, and its size when the listing gave one. */
export interface ListedFile {
  name: string;
  sizeBytes?: number;
}

function sizeOf(e: TreeEntry): number | undefined {
  const size = e.lfs?.size ?? e.size;
  return typeof size === 'number' && Number.isSafeInteger(size) && size >= 0 ? size : undefined;
}

/** The `rel="next"` URL of a paginated Hub answer (Link header), if any. */
function nextPage(response: Response): string | undefined {
  const link = response.headers.get('link');
  const m = link?.match(/<([^>]+)>\s*;\s*rel="next"/);
  return m?.[1];
}

/** Pages followed at most; a checkpoint folder holds tens of files and the Hub pages by the thousand. */
const MAX_PAGES = 10;

/**
 * The files (names relative to the folder, with sizes) of a Hub `resolve/` URL, or undefined when the URL
 * is not a Hub URL or the listing cannot be had (offline, a private or gated repo without credentials, an
 * API change): the caller then probes each file as before, so a listing can only save requests, never
 * lose a file.
 */
export async function listHubFiles(base: string, fetchImpl: typeof fetch = fetch): Promise<ListedFile[] | undefined> {
  const tree = hubTreeUrl(base);
  if (!tree) return undefined;
  const prefix = decodeURIComponent(new URL(tree).pathname.split('/tree/')[1].split('/').slice(1).join('/'));
  const files: ListedFile[] = [];
  let next: string | undefined = tree;
  for (let page = 0; next && page < MAX_PAGES; page++) {
    let response: Response;
    try {
      response = await fetchImpl(next);
    } catch {
      return undefined;
    }
    if (!response.ok) return undefined;
    let entries: unknown;
    try {
      entries = await response.json();
    } catch {
      return undefined;
    }
    if (!Array.isArray(entries)) return undefined;
    for (const e of entries as TreeEntry[]) {
      if (e?.type !== 'file' || typeof e.path !== 'string') continue;
      const name = prefix && e.path.startsWith(`${prefix}/`) ? e.path.slice(prefix.length + 1) : e.path;
      if (name.includes('/')) continue;
      const sizeBytes = sizeOf(e);
      files.push(sizeBytes === undefined ? { name } : { name, sizeBytes });
    }
    next = nextPage(response);
  }
  // Still more pages after MAX_PAGES: the listing is incomplete, so it must not be used to skip files.
  return next ? undefined : files;
}
