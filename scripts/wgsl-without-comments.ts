// WGSL without its comments and blank lines, for the package build (vite.config.ts): the code is left as
// it is (WGSL has no string literals, so every // and /* */ outside code is a comment; ours never nest).

export function wgslWithoutComments(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((line) => {
      const comment = line.indexOf('//');
      return (comment >= 0 ? line.slice(0, comment) : line).trimEnd();
    })
    .filter((line) => line.trim() !== '')
    .join('\n');
}
