/**
 * The one path of a request (docs/architecture.md, "Ownership"): computed once at the front door
 * (src/oauth/worker.ts), before any check, and the request is routed and checked on it, so the rate limits, the
 * client-metadata host check on /authorize, the sign-in return path and routing all agree on which route a request
 * is. Hono decodes percent-escapes before matching (`/%61dmin/login` is its `/admin/login`) while a check comparing
 * the raw pathname would not; so the escapes that spell route names are decoded here instead, for everyone.
 *
 * - Percent-encoded **unreserved** characters (RFC 3986 §2.3: letters, digits, `-`, `.`, `_`, `~`) are decoded: by
 *   §6.2.2.2 the two spellings are the same URI, and every route name is made of them. Dot segments that decoding
 *   makes (`%2e%2e`) are resolved as the URL parser resolves them.
 * - An encoded `/` (`%2F`), `\` (`%5C`) or NUL (`%00`) is refused: none is ever part of a route or of an id here,
 *   and each means another path to some decoder along the way.
 * - Every other escape stays as sent: it is data, not route (a search item id's `%3A`), decoded by the route that
 *   reads it.
 *
 * Pure: no I/O. No redirect is answered: the request simply is the canonical path from here on.
 */
export type CanonicalPath = { ok: true; pathname: string } | { ok: false; reason: string };

const REFUSED = /%(2f|5c|00)/i;
const UNRESERVED_ESCAPE = /%([0-9a-f]{2})/gi;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

export function canonicalPath(pathname: string): CanonicalPath {
  if (REFUSED.test(pathname)) {
    return { ok: false, reason: 'a path may not hold an encoded "/", "\\" or NUL (%2F, %5C, %00)' };
  }
  const decoded = pathname.replace(UNRESERVED_ESCAPE, (escape, hex: string) => {
    const ch = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : escape;
  });
  if (decoded === pathname) return { ok: true, pathname };
  // Decoding may have spelled `.` or `..` segments: resolve them as the URL parser does for the raw path.
  return { ok: true, pathname: new URL(`http://canonical.invalid${decoded}`).pathname };
}
