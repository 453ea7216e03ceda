// WGSL without its comments, blank lines and indentation, for the package build (vite.config.ts): the code
// is left as it is (WGSL has no string literals, so every // and /* */ outside code is a comment; ours never
// nest; whitespace between tokens is kept). The shaders are strings in the app's bundle, which its
// minifier cannot shorten, and the bundle's largest chunk must stay under the 500 kB a Vite build warns of.

export function wgslWithoutComments(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((line) => {
      const comment = line.indexOf('//');
      return (comment >= 0 ? line.slice(0, comment) : line).trim();
    })
    .filter((line) => line.trim() !== '')
    .join('\n');
}
