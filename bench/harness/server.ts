// The Vite dev server every benchmark suite runs on: the browser suites open its pages, the Node suites
// load their modules through it (WGSL `?raw` imports need Vite either way). HMR and file watching are off
// (an edit elsewhere in the checkout must not reload a page mid-run), nothing is pre-bundled unless a
// suite asks (a dependency discovered mid-run would make Vite reload the page), and the dependency cache
// is the benchmarks' own, so a run never races the demo's dev server over node_modules/.vite.

import { join } from 'node:path';
import { createServer, type DepOptimizationOptions, type Plugin, type ViteDevServer } from 'vite';

export class BenchServerError extends Error {
  override readonly name = 'BenchServerError';
}

export interface BenchServerOptions {
  /** The folder served at / (the suite's own, holding its .html pages). */
  root: string;
  /** The repository: its files are reachable as /@fs/... */
  repoRoot: string;
  /** Served at / beside root (the bench model folders), or none. */
  publicDir?: string | false;
  /** CommonJS packages a page imports (pre-bundled before the page opens); default none. */
  preBundle?: string[];
  /** false: no HTTP listener, modules only (a Node suite). Default true. */
  listen?: boolean;
  /**
   * Every response says the pages are cross-origin isolated (COOP same-origin, COEP require-corp), as a page
   * needs for performance.now() at microseconds in Chromium (and for SharedArrayBuffer). Default false.
   */
  isolated?: boolean;
}

export interface BenchServer {
  /** http://127.0.0.1:<port>/ (empty when not listening). */
  url: string;
  /** A TypeScript module of the repository, loaded in this Node process through Vite. */
  load<T>(path: string): Promise<T>;
  close(): Promise<void>;
}

export async function startBenchServer(options: BenchServerOptions): Promise<BenchServer> {
  const listen = options.listen ?? true;
  const optimizeDeps: DepOptimizationOptions = { noDiscovery: true, include: options.preBundle ?? [] };
  const server: ViteDevServer = await createServer({
    configFile: false,
    root: options.root,
    publicDir: options.publicDir ?? false,
    cacheDir: join(options.repoRoot, 'node_modules', '.vite-bench'),
    logLevel: 'warn',
    appType: 'mpa',
    server: listen
      ? { host: '127.0.0.1', port: 0, hmr: false, watch: null, fs: { allow: [options.repoRoot] } }
      : { middlewareMode: true, hmr: false, watch: null },
    optimizeDeps,
    plugins: options.isolated ? [isolatePages()] : [],
  });
  let url = '';
  if (listen) {
    await server.listen();
    url = server.resolvedUrls?.local[0] ?? '';
    if (!url) {
      await server.close();
      throw new BenchServerError('the Vite dev server started but reported no local URL');
    }
  }
  return {
    url,
    load: async <T>(path: string) => (await server.ssrLoadModule(path)) as T,
    close: () => server.close(),
  };
}

/** The headers of a cross-origin isolated page on every response (BenchServerOptions.isolated). */
function isolatePages(): Plugin {
  return {
    name: 'tessera-bench-isolated',
    configureServer(server) {
      server.middlewares.use((_req, res, next) => {
        res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
        res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
        res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
        next();
      });
    },
  };
}
