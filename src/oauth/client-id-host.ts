/**
 * The part of the Client ID Metadata Document bounds the library does not enforce: the host of an https
 * `client_id` must be a public one. The library fetches the document itself (https only, 5 KB, 10 s, `client_id`
 * equal to its URL); `global_fetch_strictly_public` keeps that fetch off same-zone origins in production. A
 * literal private, loopback, link-local or otherwise reserved address, or a local name, is refused here before
 * any fetch, so no deployment (and no `wrangler dev`) ever asks an internal host for a document.
 */

/** IPv4 ranges that are not on the public internet (RFC 6890 special-purpose registry, the parts that matter). */
const PRIVATE_V4: readonly [number, number][] = [
  [0x00000000, 8], // 0.0.0.0/8 "this network"
  [0x0a000000, 8], // 10/8 private
  [0x64400000, 10], // 100.64/10 carrier-grade NAT
  [0x7f000000, 8], // 127/8 loopback
  [0xa9fe0000, 16], // 169.254/16 link-local (cloud metadata endpoints)
  [0xac100000, 12], // 172.16/12 private
  [0xc0000000, 24], // 192.0.0/24 IETF protocol assignments
  [0xc0000200, 24], // 192.0.2/24 documentation
  [0xc0a80000, 16], // 192.168/16 private
  [0xc6120000, 15], // 198.18/15 benchmarking
  [0xc6336400, 24], // 198.51.100/24 documentation
  [0xcb007100, 24], // 203.0.113/24 documentation
  [0xe0000000, 4], // 224/4 multicast
  [0xf0000000, 4], // 240/4 reserved, broadcast
];

function parseV4(host: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return parts.reduce((acc, p) => acc * 256 + p, 0);
}

function isPrivateV4(addr: number): boolean {
  return PRIVATE_V4.some(([base, bits]) => Math.floor(addr / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
}

/** The 8 groups of an IPv6 literal as the WHATWG URL parser serialises it (lowercase, compressed, no zone). */
function parseV6(host: string): number[] | null {
  if (!host.startsWith('[') || !host.endsWith(']')) return null;
  let body = host.slice(1, -1);
  // An embedded dotted quad (::ffff:1.2.3.4) becomes its two groups.
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(body);
  if (dotted?.[1]) {
    const v4 = parseV4(dotted[1]);
    if (v4 === null) return null;
    body = `${body.slice(0, -dotted[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = body.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  if (tail === undefined ? headGroups.length !== 8 : missing < 0) return null;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailGroups].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function isPrivateV6(g: number[]): boolean {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0] = g;
  if (g.every((x) => x === 0)) return true; // :: unspecified
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return true; // ::1 loopback
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && (f === 0xffff || f === 0)) {
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judge the embedded address.
    return isPrivateV4((g[6] ?? 0) * 0x10000 + (g[7] ?? 0));
  }
  if (a === 0x64 && b === 0xff9b) return true; // 64:ff9b::/96 NAT64 can reach private v4
  if ((a & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((a & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((a & 0xffc0) === 0xfec0) return true; // fec0::/10 site-local (deprecated)
  if ((a & 0xff00) === 0xff00) return true; // ff00::/8 multicast
  if (a === 0x2001 && b === 0x0db8) return true; // 2001:db8::/32 documentation
  return false;
}

/** Names that never resolve to a public host. */
function isLocalName(host: string): boolean {
  const name = host.replace(/\.$/, '');
  return (
    !name.includes('.') ||
    name === 'localhost' ||
    /\.(?:localhost|local|localdomain|internal|intranet|lan|home\.arpa|corp|private)$/.test(name)
  );
}

/**
 * Why an https `client_id` may not be fetched as a metadata document, or null when its host looks public (or it
 * is not a URL at all, which the library handles as a registered client id). Hosts are compared as the URL parser
 * normalises them, so `https://0x7f.1/`, `https://2130706433/` and `https://[::ffff:7f00:1]/` are caught too.
 */
export function clientIdHostProblem(clientId: string): string | null {
  if (!/^https:\/\//i.test(clientId)) return null;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return null;
  }
  const host = url.hostname.toLowerCase();
  const v4 = parseV4(host);
  if (v4 !== null) return isPrivateV4(v4) ? `client_id host ${host} is not a public address` : null;
  const v6 = parseV6(host);
  if (v6 !== null) return isPrivateV6(v6) ? `client_id host ${host} is not a public address` : null;
  if (host.startsWith('[')) return `client_id host ${host} is not a valid address`;
  return isLocalName(host) ? `client_id host ${host} is not a public host name` : null;
}
