import type { Env } from '../env';
import { ApiError } from '../errors';
import { createLogger, newRequestId } from '../lib/log';
import { MCP_PATH, mcpErrorResponse } from '../mcp/handler';
import { mcpApiHandler } from './mcp-api';
import { canonicalOrigin, providerFor, type OAuthHandlers } from './provider';
import { bindRequestScope } from './request-scope';

const UNAUTHORIZED_MESSAGE =
  'missing, invalid, expired or revoked credentials; send Authorization: Bearer <API key or OAuth access token>';

/** Headers of the library's 401 challenge that must survive the body rewrite. */
const KEPT_CHALLENGE_HEADERS = ['www-authenticate', 'cache-control', 'pragma', 'vary'];

/**
 * The library answers a bad or missing token on the MCP endpoint with its own body (empty, or `{ error:
 * "invalid_token" }`). Clients follow the `WWW-Authenticate` challenge, not the body, so the body becomes ours
 * (spec: 401 UNAUTHORIZED in the error shape) and the challenge and CORS headers stay.
 */
async function rewriteUnauthorized(res: Response, requestId: string): Promise<Response> {
  let oauthError: unknown;
  try {
    oauthError = res.body ? await res.json() : undefined;
  } catch {
    oauthError = undefined;
  }
  const out = mcpErrorResponse(
    new ApiError('UNAUTHORIZED', UNAUTHORIZED_MESSAGE, oauthError === undefined ? {} : { details: oauthError }),
    requestId,
  );
  for (const [name, value] of res.headers) {
    if (KEPT_CHALLENGE_HEADERS.includes(name) || name.startsWith('access-control-')) out.headers.set(name, value);
  }
  return out;
}

/** Every response carries x-request-id; the library's own (metadata, token, registration) get the request's. */
function withRequestId(res: Response, requestId: string): Response {
  if (res.headers.has('x-request-id')) return res;
  // Library responses may have immutable headers (Response.redirect); copy into a mutable one.
  const out = new Response(res.body, res);
  out.headers.set('x-request-id', requestId);
  return out;
}

/**
 * The Worker's fetch: `OAuthProvider` in front (discovery metadata, registration, token and revocation endpoints,
 * bearer checks on /v1/data/mcp), the MCP handler behind it for valid OAuth tokens and API keys, and the Hono app
 * (REST, /authorize, /admin) for everything else.
 */
export function createWorker(defaultHandler: OAuthHandlers['defaultHandler']) {
  const handlers: OAuthHandlers = { apiHandler: mcpApiHandler, defaultHandler };
  return {
    async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
      const requestId = newRequestId();
      const log = createLogger(requestId);
      const url = new URL(request.url);
      const origin = canonicalOrigin(url);
      const routed = origin === url.origin ? request : new Request(`${origin}${url.pathname}${url.search}`, request);
      // A per-request copy: the library caches its helpers on the env it is given, and they are per origin.
      const requestEnv: Env = { ...env };
      bindRequestScope(requestEnv, { requestId, log, waitUntil: (p) => ctx.waitUntil(p) });
      let res: Response;
      try {
        res = await providerFor(origin, handlers).fetch(routed, requestEnv, ctx);
      } catch (err) {
        return mcpErrorResponse(err, requestId, log);
      }
      const isMcp = url.pathname === MCP_PATH || url.pathname.startsWith(`${MCP_PATH}/`);
      if (res.status === 401 && isMcp && !res.headers.has('x-request-id')) {
        return rewriteUnauthorized(res, requestId);
      }
      return withRequestId(res, requestId);
    },
  };
}
