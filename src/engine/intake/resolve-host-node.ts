// Host name resolution for media.blockPrivateNetwork in Node: every address the name resolves to (the
// check refuses the host if any of them is private), as the OS resolver answers it.

import { lookup } from 'node:dns/promises';
import type { ResolveHost } from './media-options';

export const resolveHostNode: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
