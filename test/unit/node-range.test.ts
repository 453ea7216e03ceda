// The Node versions the package promises (package.json engines, the README's "Node 20.19 or newer") are the
// ones its runtime dependencies accept: a clean npm ci on the oldest promised Node warns EBADENGINE for none
// of them (eventsource-parser 4 needs Node 22.12; the package takes 3.x). Dev-only packages are the
// repository's tools, not what an app installs.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import semver from 'semver';
import { expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(resolve(root, 'package-lock.json'), 'utf8'));

it('every runtime dependency in the lockfile accepts the oldest Node the package promises, which the README states', () => {
  const oldest = semver.minVersion(manifest.engines.node)!.version;
  const refused = Object.entries(lock.packages as Record<string, { dev?: boolean; engines?: { node?: string } }>)
    .filter(([path, p]) => path && !p.dev && p.engines?.node && !semver.satisfies(oldest, p.engines.node))
    .map(([path, p]) => `${path} needs Node ${p.engines!.node}`);
  expect(refused).toEqual([]);
  expect(readFileSync(resolve(root, 'README.md'), 'utf8')).toContain(`Node ${oldest.replace(/\.0$/, '')} or newer`);
});
