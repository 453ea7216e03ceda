// What the demo's "Hugging Face" field accepts, turned into the URL base the engine loads from:
//
//   HuggingFaceTB/SmolVLM-256M-Instruct                              -> https://huggingface.co/HuggingFaceTB/SmolVLM-256M-Instruct/resolve/main/
//   https://huggingface.co/HuggingFaceTB/SmolVLM-256M-Instruct        -> (same)
//   https://huggingface.co/<owner>/<repo>/tree/<rev>/<folder>        -> https://huggingface.co/<owner>/<repo>/resolve/<rev>/<folder>/
//   https://huggingface.co/<owner>/<repo>/resolve/<rev>/             -> (kept)
//   any other http(s) URL, /path or ./path                            -> kept, with a trailing slash (a checkpoint folder)
//   a URL of a .gguf file (Hub blob/ or resolve/ links included)      -> the file's URL (a GGUF model; its mmproj beside it)

const REPO_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;
const HUB_HOSTS = new Set(['huggingface.co', 'hf.co']);

/** The model URL base for what was typed; undefined when it is neither a repo id nor a URL. */
export function modelUrlFromInput(input: string, pageUrl: string): string | undefined {
  const text = input.trim();
  if (text === '') return undefined;
  // A .gguf file is a GGUF model (src/engine/browser-model.ts), not a folder: no trailing slash.
  const slash = (u: string) => (u.endsWith('/') || /\.gguf$/i.test(u) ? u : `${u}/`);
  if (REPO_ID.test(text) && !text.startsWith('.')) return `https://huggingface.co/${text}/resolve/main/`;
  let url: URL;
  try {
    url = /^(https?:)?\/\/|^\.{0,2}\//.test(text) ? new URL(text, pageUrl) : new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.search = '';
  url.hash = '';
  if (!HUB_HOSTS.has(url.hostname)) return slash(url.href);
  const parts = url.pathname.split('/').filter((p) => p !== '');
  if (parts.length === 2) return `${url.origin}/${parts[0]}/${parts[1]}/resolve/main/`;
  if (parts.length >= 4 && (parts[2] === 'tree' || parts[2] === 'resolve' || (parts[2] === 'blob' && /\.gguf$/i.test(url.pathname)))) {
    return slash(`${url.origin}/${parts[0]}/${parts[1]}/resolve/${parts.slice(3).join('/')}`);
  }
  return undefined;
}
