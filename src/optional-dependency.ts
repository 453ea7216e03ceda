// Node-only packages that Tessera's package.json lists as OPTIONAL peer dependencies (`webgpu`, `sharp`):
// browser apps never install or load them, Node apps add them. They are loaded with import() at first use,
// so a missing one fails as MissingDependencyError (what to install), not as a bare module-not-found at
// import time of 'tessera/node'.

import { MissingDependencyError } from './errors';

/** Whether a failed import() means the package itself is not installed (rather than installed but broken). */
function isMissingPackage(e: unknown, name: string): boolean {
  const err = e as { code?: unknown; message?: unknown } | undefined;
  const notFound = err?.code === 'ERR_MODULE_NOT_FOUND' || err?.code === 'MODULE_NOT_FOUND';
  return notFound && typeof err?.message === 'string' && err.message.includes(`'${name}'`);
}

/**
 * `load` is `() => import('<name>')`, written at the call site so bundlers and type checkers see the
 * specifier. Errors other than "not installed" pass through unchanged.
 */
export async function importOptional<T>(name: string, purpose: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if (isMissingPackage(e, name)) throw new MissingDependencyError(name, purpose, e);
    throw e;
  }
}
