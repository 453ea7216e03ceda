// Instances of every error class a module exports (subclasses of its TesseraError), with the name and
// code each instance reports. Constructor arguments are placeholders: messages are only formatted.

export interface ErrorClassName {
  exportName: string;
  name: string;
  code: string;
}

type ErrorClass = new (...args: unknown[]) => Error & { code: string };

/** Argument lists tried in turn; `[1]` reads as a number, a string and an array alike. */
const ARGUMENTS: unknown[][] = [Array(6).fill([1]), Array(6).fill('1'), Array(6).fill(1)];

export function errorClassNames(mod: Record<string, unknown>): ErrorClassName[] {
  const base = mod.TesseraError as ErrorClass;
  return Object.entries(mod)
    .filter((e): e is [string, ErrorClass] => typeof e[1] === 'function' && e[1].prototype instanceof base)
    .map(([exportName, cls]) => {
      for (const args of ARGUMENTS) {
        try {
          const e = new cls(...args);
          return { exportName, name: e.name, code: e.code };
        } catch {
          // try the next argument list
        }
      }
      throw new Error(`could not construct ${exportName} with placeholder arguments`);
    });
}
