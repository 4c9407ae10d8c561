/**
 * Origin validation and CORS for the API (REST and MCP under /v1/). Browsers send `Origin`; server-to-server
 * clients (assistants' backends, SDKs, curl) do not, and always pass. A browser origin is accepted when it is the
 * service's own origin or listed in `ALLOWED_ORIGINS` (comma-separated origins, empty by default). The MCP
 * endpoint refuses any other browser origin with 403 (MCP Streamable HTTP: DNS-rebinding protection); REST answers
 * it without CORS headers, so the browser does not let the page read the response. Credentials are bearer tokens,
 * never cookies, so no `Access-Control-Allow-Credentials`.
 */

/** Request headers a browser client may send (MCP Streamable HTTP 2025-era and 2026-07-28 headers included). */
export const CORS_ALLOW_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Mcp-Protocol-Version',
  'Mcp-Session-Id',
  'Mcp-Method',
  'Mcp-Name',
  'Last-Event-ID',
  'If-Match',
] as const;

/** Response headers a browser client may read: the request id, the OAuth challenge, MCP's session, backoff, versions. */
export const CORS_EXPOSE_HEADERS = ['x-request-id', 'WWW-Authenticate', 'Mcp-Session-Id', 'Retry-After', 'ETag'] as const;

const CORS_ALLOW_METHODS = 'GET, POST, PATCH, DELETE, OPTIONS';
/** How long a browser may cache a preflight answer (seconds). */
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/** How a request's `Origin` stands: none sent, allowed (CORS applies), or a browser origin we do not serve. */
export type OriginVerdict = { kind: 'none' } | { kind: 'allowed'; origin: string } | { kind: 'refused'; origin: string };

/**
 * Parses `ALLOWED_ORIGINS`. Each entry must be a bare origin (`https://inspector.example`, `http://localhost:6274`);
 * anything else is a deployment error, reported rather than silently ignored.
 */
export function parseAllowedOrigins(raw: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const entry of (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch {
      url = null;
    }
    if (!url || url.origin === 'null' || url.origin !== entry.replace(/\/$/, '')) {
      throw new Error(`configuration variable ALLOWED_ORIGINS: ${JSON.stringify(entry)} is not an origin (scheme://host[:port])`);
    }
    out.add(url.origin);
  }
  return out;
}

/** Judges the request's `Origin` against the service's own origin(s) and the allowlist. */
export function originVerdict(request: Request, ownOrigins: readonly string[], allowlist: string | undefined): OriginVerdict {
  const origin = request.headers.get('origin');
  if (origin === null) return { kind: 'none' };
  if (ownOrigins.includes(origin) || parseAllowedOrigins(allowlist).has(origin)) return { kind: 'allowed', origin };
  return { kind: 'refused', origin };
}

/** A CORS preflight: OPTIONS with `Access-Control-Request-Method`. */
export function isPreflight(request: Request): boolean {
  return request.method === 'OPTIONS' && request.headers.has('access-control-request-method');
}

/** Sets the CORS headers for an allowed origin on a (mutable) response's headers. */
export function applyCors(headers: Headers, origin: string): void {
  headers.set('access-control-allow-origin', origin);
  headers.set('access-control-expose-headers', CORS_EXPOSE_HEADERS.join(', '));
  headers.delete('access-control-allow-credentials');
  const vary = (headers.get('vary') ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (!vary.some((v) => v.toLowerCase() === 'origin')) headers.set('vary', [...vary, 'Origin'].join(', '));
}

/** The answer to a preflight from an allowed origin: 204 with what the browser needs to send the real request. */
export function preflightResponse(origin: string, requestId: string): Response {
  const headers = new Headers({
    'access-control-allow-methods': CORS_ALLOW_METHODS,
    'access-control-allow-headers': CORS_ALLOW_HEADERS.join(', '),
    'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
    'x-request-id': requestId,
  });
  applyCors(headers, origin);
  return new Response(null, { status: 204, headers });
}
