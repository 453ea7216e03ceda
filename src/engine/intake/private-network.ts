// Whether an IP address is private, loopback, link-local or otherwise not a public unicast host: the
// addresses an app passing untrusted image URLs through must not let them reach (its own machine, its
// network, a cloud metadata service at 169.254.169.254). Plain TypeScript (browsers and Node), for
// addresses as the WHATWG URL parser and dns.lookup print them: IPv4 dotted quads (URL normalises
// 0x7f.1 or 2130706433 to 127.0.0.1) and IPv6 in any valid text form. Ranges from the IANA special-purpose
// registries (RFC 6890 and successors).

/** [first octets as a 32-bit prefix, prefix length]: IPv4 ranges that are not public unicast. */
const V4_BLOCKED: ReadonlyArray<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

function parseV4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

function v4Blocked(a: number): boolean {
  return V4_BLOCKED.some(([base, bits]) => a >>> (32 - bits) === parseV4(base)! >>> (32 - bits));
}

/** Eight 16-bit groups, or undefined when `s` is not an IPv6 address. */
function parseV6(s: string): number[] | undefined {
  let text = s.replace(/^\[|\]$/g, '').replace(/%.*$/, ''); // brackets, zone id
  const tail = /:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const v4 = parseV4(tail[1]);
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, tail.index)}:${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if ((halves.length === 2 && missing < 1) || (halves.length === 1 && missing !== 0)) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return all.map((g) => parseInt(g, 16));
}

function v6Blocked(g: number[]): boolean {
  const v4At = (i: number) => ((g[i] << 16) | g[i + 1]) >>> 0;
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return true; // :: unspecified
  if (zeros(7) && g[7] === 1) return true; // ::1 loopback
  if (zeros(5) && g[5] === 0xffff) return v4Blocked(v4At(6)); // ::ffff:a.b.c.d IPv4-mapped
  if (zeros(6)) return v4Blocked(v4At(6)); // ::a.b.c.d IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4Blocked(v4At(6)); // NAT64
  if (g[0] === 0x2002) return v4Blocked(v4At(1)); // 6to4 carries an IPv4 address
  if ((g[0] & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0) return true; // link-local, old site-local
  if ((g[0] & 0xff00) === 0xff00) return true; // multicast
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return true; // 100::/64 discard
  return false;
}

/** 'v4' or 'v6' when `host` (a URL hostname, brackets allowed) is an IP literal, else undefined. */
export function ipKind(host: string): 'v4' | 'v6' | undefined {
  if (parseV4(host) !== undefined) return 'v4';
  return host.includes(':') && parseV6(host) ? 'v6' : undefined;
}

/** True for every address that is not a public unicast host (and for anything unparseable). */
export function isPrivateAddress(address: string): boolean {
  const v4 = parseV4(address);
  if (v4 !== undefined) return v4Blocked(v4);
  const v6 = parseV6(address);
  return v6 ? v6Blocked(v6) : true;
}

/** Host names that always mean this machine (RFC 6761 `localhost` and its subdomains). */
export function isLocalHostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}
