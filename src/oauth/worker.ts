import { inRequestScope, newRequestScope, type RequestScope } from '../context';
import type { Env } from '../env';
import { ApiError, describeError } from '../errors';
import { applyCors, isPreflight, originVerdict, preflightResponse, type OriginVerdict } from '../http/cors';
import { canonicalPath } from '../http/canonical-path';
import { checkPublicLimit } from '../http/public-limits';
import type { Logger } from '../lib/log';
import type { Tool } from '../mcp/define-tool';
import { MCP_PATH, mcpErrorResponse } from '../mcp/handler';
import { clientIdHostProblem } from './client-id-host';
import { forgetGrantUse } from './grant-activity';
import { mcpApiHandler } from './mcp-api';
import { AUTHORIZE_PATH, canonicalOrigin, oauthHelpers, providerFor, TOKEN_PATH, type OAuthHandlers } from './provider';
import { claimRefreshToken, settleRefreshToken } from './refresh-gate';
import { refreshTokenHash, refreshTokenRef, type RefreshTokenRef } from './refresh-reuse';

const UNAUTHORIZED_MESSAGE = 'missing, invalid, expired or revoked credentials; send Authorization: Bearer <API key or OAuth access token>';

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

/** Realm of the REST API's bearer challenge (the MCP endpoint's comes from the library, realm "OAuth"). */
const REST_REALM = 'Warehouse Query API';

/**
 * RFC 6750 §3 challenge for a REST 401: no error code when no credentials were sent, `invalid_request` when the
 * Authorization header is not a bearer token, `invalid_token` when a token was sent and refused.
 */
function restChallenge(scope: RequestScope): string {
  if (scope.authorization.kind === 'none') return `Bearer realm="${REST_REALM}"`;
  const error = scope.authorization.kind === 'malformed' ? 'invalid_request' : 'invalid_token';
  return `Bearer realm="${REST_REALM}", error="${error}"`;
}

/** A response whose headers can be changed (library responses may be immutable, e.g. Response.redirect). */
function mutable(res: Response): Response {
  return new Response(res.body, res);
}

/** An OAuth token-endpoint error (RFC 6749 §5.2), never cached. */
function tokenError(status: 400 | 401, error: string, description: string): Response {
  return Response.json({ error, error_description: description }, { status, headers: { 'cache-control': 'no-store', pragma: 'no-cache' } });
}

/** The form fields of a token-endpoint request (form-encoded per RFC 6749), read from a copy of the request. */
async function tokenForm(request: Request): Promise<URLSearchParams | null> {
  if (request.method !== 'POST') return null;
  if (!(request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) return null;
  return new URLSearchParams(await request.clone().text());
}

/** A refresh token this request claimed (its grant's gate let it through first). */
interface ClaimedRefresh {
  ref: RefreshTokenRef;
  hash: string;
}

type TokenCheck = { kind: 'pass'; refresh: ClaimedRefresh | null } | { kind: 'refused'; res: Response };

/** Revokes the grant of a reused refresh token (and forgets its last use); a failure is logged, not thrown. */
async function revokeReusedGrant(request: Request, env: Env, log: Logger, ref: RefreshTokenRef): Promise<void> {
  try {
    await Promise.all([oauthHelpers(env, request.url).revokeGrant(ref.grantId, ref.userId), forgetGrantUse(env, ref.grantId)]);
  } catch (err) {
    log.error('grant revocation after refresh-token reuse failed', { grantId: ref.grantId, internal: describeError(err) });
  }
}

/**
 * Checks made before the library sees a token request: a metadata-document `client_id` on a non-public host is
 * refused before anything is fetched, and a refresh token is claimed at its grant's gate. Presenting again a token
 * the library already exchanged revokes the grant; presenting one whose first exchange is still running is refused
 * (and revokes the grant after, only if that exchange succeeds: src/oauth/refresh-gate.ts). A token the library
 * never verified revokes nothing.
 */
async function checkTokenRequest(request: Request, env: Env, log: Logger): Promise<TokenCheck> {
  const form = await tokenForm(request);
  if (!form) return { kind: 'pass', refresh: null };
  const hostProblem = clientIdHostProblem(form.get('client_id') ?? '');
  if (hostProblem) {
    log.warn('client metadata document host refused', { reason: hostProblem });
    return { kind: 'refused', res: tokenError(401, 'invalid_client', hostProblem) };
  }
  const ref = form.get('grant_type') === 'refresh_token' ? refreshTokenRef(form.get('refresh_token')) : null;
  if (ref === null) return { kind: 'pass', refresh: null };
  const hash = await refreshTokenHash(ref);
  const { verdict } = await claimRefreshToken(env, ref.grantId, hash, Date.now());
  if (verdict === 'reused') {
    log.warn('refresh token reused; revoking its grant', { grantId: ref.grantId });
    await revokeReusedGrant(request, env, log, ref);
    return {
      kind: 'refused',
      res: tokenError(
        400,
        'invalid_grant',
        'this refresh token was already used once; the connection has been revoked, approve the assistant again',
      ),
    };
  }
  if (verdict === 'concurrent') {
    log.warn('refresh token presented while its exchange runs', { grantId: ref.grantId });
    return {
      kind: 'refused',
      res: tokenError(
        400,
        'invalid_grant',
        'this refresh token is being exchanged by another request; if that exchange succeeds the connection is revoked as reused',
      ),
    };
  }
  return { kind: 'pass', refresh: { ref, hash } };
}

/** 403 for a browser origin the API does not serve. */
function originRefused(origin: string, requestId: string, log: Logger): Response {
  return mcpErrorResponse(
    new ApiError('FORBIDDEN_ORIGIN', `browser origin ${origin} is not allowed; an administrator can add it to ALLOWED_ORIGINS`),
    requestId,
    log,
  );
}

/** Every response carries x-request-id; the library's own (metadata, token, registration) get the request's. */
function withRequestId(res: Response, requestId: string): Response {
  if (res.headers.has('x-request-id')) return res;
  const out = mutable(res);
  out.headers.set('x-request-id', requestId);
  return out;
}

/**
 * The Worker's fetch: `OAuthProvider` in front (discovery metadata, registration, token and revocation endpoints,
 * bearer checks on /v1/data/mcp), the MCP handler behind it for valid OAuth tokens and API keys, and the Hono app
 * (REST, /authorize, /admin) for everything else. Around the provider, for every path: Origin validation and CORS
 * on /v1/ (before authentication, so 401s and 403s are readable by allowed pages), the private-host check on
 * metadata-document client ids, refresh-token reuse detection, the WWW-Authenticate challenge on REST 401s, and the
 * per-source rate limits of the unauthenticated endpoints (src/http/public-limits.ts).
 */
export function createWorker(parts: { defaultHandler: OAuthHandlers['defaultHandler']; mcpTools: readonly Tool[] }) {
  const handlers: OAuthHandlers = { apiHandler: mcpApiHandler(parts.mcpTools), defaultHandler: parts.defaultHandler };
  return {
    fetch(received: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
      const url = new URL(received.url);
      // One path for every check below and for routing: src/http/canonical-path.ts.
      const canonical = canonicalPath(url.pathname);
      if (canonical.ok) url.pathname = canonical.pathname;
      const request = url.href === received.url ? received : new Request(url, received);
      // The request's one scope (src/context.ts): everything below, the provider's callbacks, the MCP endpoint and
      // the REST app included, reads it with requestScope().
      const scope = newRequestScope(request, env, canonicalOrigin(url), (p) => ctx.waitUntil(p));
      if (!canonical.ok) {
        return Promise.resolve(mcpErrorResponse(new ApiError('VALIDATION', canonical.reason), scope.requestId, scope.log));
      }
      return inRequestScope(scope, () => serve(request, env, ctx, url, scope));
    },
  };

  async function serve(request: Request, env: Env, ctx: ExecutionContext, url: URL, scope: RequestScope): Promise<Response> {
    const { requestId, log, origin } = scope;
    const isMcp = url.pathname === MCP_PATH || url.pathname.startsWith(`${MCP_PATH}/`);
    const isApi = url.pathname.startsWith('/v1/');

    // Origin and CORS for REST and MCP, before authentication so that 401s and 403s are readable by allowed pages.
    let cors: OriginVerdict = { kind: 'none' };
    if (isApi) {
      try {
        cors = originVerdict(request, [url.origin, origin], env.ALLOWED_ORIGINS);
      } catch (err) {
        return mcpErrorResponse(err, requestId, log);
      }
      if (cors.kind === 'refused' && (isMcp || isPreflight(request))) return originRefused(cors.origin, requestId, log);
      if (cors.kind === 'allowed' && isPreflight(request)) return preflightResponse(cors.origin, requestId);
    }

    const routed = origin === url.origin ? request : new Request(`${origin}${url.pathname}${url.search}`, request);
    // The provider is handed the isolate's env: the helpers the library leaves on it (env.OAUTH_PROVIDER, made for
    // the first origin served) are never read here; oauthHelpers(env, url) makes them per origin instead.
    let res: Response;
    try {
      const limited = await checkPublicLimit(env, request, url.pathname).catch((err: unknown) => {
        // A limiter that cannot answer lets the request through: the endpoints keep their own checks.
        log.warn('public rate limiter failed; request let through', { internal: describeError(err) });
        return null;
      });
      if (limited) return mcpErrorResponse(limited, requestId, log);
      if (url.pathname.replace(/\/$/, '') === AUTHORIZE_PATH) {
        const hostProblem = clientIdHostProblem(url.searchParams.get('client_id') ?? '');
        if (hostProblem) {
          log.warn('client metadata document host refused', { reason: hostProblem });
          return mcpErrorResponse(new ApiError('VALIDATION', `this app cannot be verified: ${hostProblem}`), requestId, log);
        }
      }
      let refresh: ClaimedRefresh | null = null;
      if (url.pathname === TOKEN_PATH) {
        const check = await checkTokenRequest(routed, env, log);
        if (check.kind === 'refused') {
          // Readable by a browser-based OAuth client, as the library's own token responses are (any origin).
          const browserOrigin = request.headers.get('origin');
          if (browserOrigin !== null) applyCors(check.res.headers, browserOrigin);
          return withRequestId(check.res, requestId);
        }
        refresh = check.refresh;
      }
      res = await providerFor(origin, handlers).fetch(routed, env, ctx);
      if (refresh) {
        // Reuse seen while this exchange ran: its write may have brought the revoked grant back, so revoke again.
        const { reused } = await settleRefreshToken(env, refresh.ref.grantId, refresh.hash, res.status === 200, Date.now());
        if (reused) await revokeReusedGrant(routed, env, log, refresh.ref);
      }
    } catch (err) {
      return mcpErrorResponse(err, requestId, log);
    }

    if (res.status === 401 && isMcp && !res.headers.has('x-request-id')) {
      res = await rewriteUnauthorized(res, requestId);
    } else if (res.status === 401 && isApi && !res.headers.has('www-authenticate')) {
      res = mutable(res);
      res.headers.set('www-authenticate', restChallenge(scope));
    }
    res = withRequestId(res, requestId);
    if (cors.kind === 'allowed') {
      res = mutable(res);
      applyCors(res.headers, cors.origin);
    }
    return res;
  }
}
