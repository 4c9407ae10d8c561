import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { MAX_BODY_BYTES } from '../app';
import { authenticateApiKey, bearerToken } from '../auth/api-keys';
import type { Principal } from '../auth/principal';
import type { Env } from '../env';
import { ApiError, describeError, errorBody, toApiError } from '../errors';
import { createLogger, newRequestId, type Logger } from '../lib/log';
import type { OpContext } from '../operations/context';
import { createMcpServer } from './server';

/** Path of the MCP endpoint (spec section 8). */
export const MCP_PATH = '/v1/data/mcp';

/** Where the OAuth protected-resource metadata (RFC 9728) is served; named in every 401 from this endpoint. */
export function resourceMetadataUrl(request: Request): string {
  return `${new URL(request.url).origin}/.well-known/oauth-protected-resource`;
}

/** Our error body and status for an HTTP-level failure on the MCP endpoint, with x-request-id and the error's headers. */
export function mcpErrorResponse(err: unknown, requestId: string, log: Logger = createLogger(requestId)): Response {
  const apiErr = toApiError(err);
  if (apiErr.status >= 500) log.error('mcp request failed', { code: apiErr.code, internal: describeError(apiErr.internal ?? err) });
  const headers = new Headers({ 'content-type': 'application/json', 'x-request-id': requestId });
  for (const [k, v] of Object.entries(apiErr.headers ?? {})) headers.set(k, v);
  return new Response(JSON.stringify(errorBody(apiErr, requestId)), { status: apiErr.status, headers });
}

/**
 * 401 for missing or bad credentials: our error body plus the `WWW-Authenticate` challenge MCP clients follow to
 * discover OAuth (MCP authorization spec, RFC 9728 section 5.1). `error="invalid_token"` only when a token was sent
 * (RFC 6750 section 3.1).
 */
export function mcpUnauthorizedResponse(request: Request, requestId: string, err: unknown): Response {
  const apiErr = err instanceof ApiError && err.code === 'UNAUTHORIZED' ? err : new ApiError('UNAUTHORIZED', 'missing or invalid credentials');
  const res = mcpErrorResponse(apiErr, requestId);
  const sentToken = bearerToken(request.headers.get('authorization')) !== null;
  res.headers.set(
    'www-authenticate',
    `Bearer resource_metadata="${resourceMetadataUrl(request)}"${sentToken ? ', error="invalid_token"' : ''}`,
  );
  return res;
}

function methodNotAllowed(method: string, requestId: string): Response {
  // Streamable HTTP: a server that offers no SSE stream answers GET with 405, and one without sessions may
  // answer DELETE with 405. This endpoint is stateless and replies to every POST in its own response.
  const why =
    method === 'GET'
      ? 'this MCP endpoint offers no server-initiated SSE stream'
      : method === 'DELETE'
        ? 'this MCP endpoint is stateless and has no session to terminate'
        : `method ${method} is not allowed on ${MCP_PATH}`;
  const res = mcpErrorResponse(new ApiError('METHOD_NOT_ALLOWED', `${why}; send JSON-RPC messages with POST`), requestId);
  res.headers.set('allow', 'POST');
  return res;
}

/**
 * Serves one MCP request for an already authenticated principal (API key or OAuth; this function does not care
 * which). Stateless: a fresh McpServer and transport per request, JSON responses (no SSE). Every response carries
 * `x-request-id`; HTTP-level failures use our error body, JSON-RPC failures stay JSON-RPC.
 */
export async function handleMcpRequest(
  request: Request,
  env: Env,
  ctx: ExecutionContext,
  principal: Principal,
  requestId: string,
): Promise<Response> {
  const log = createLogger(requestId);
  if (request.method !== 'POST') return methodNotAllowed(request.method, requestId);

  const opContext: OpContext = {
    env,
    principal,
    requestId,
    log,
    now: Date.now(),
    transport: 'mcp',
    waitUntil: (p) => ctx.waitUntil(p),
  };
  const server = createMcpServer({ ctx: opContext });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  try {
    await server.connect(transport);
    const res = await transport.handleRequest(request);
    // Re-wrap: the transport's Response may have immutable headers on some runtimes.
    const out = new Response(res.body, res);
    out.headers.set('x-request-id', requestId);
    return out;
  } catch (err) {
    return mcpErrorResponse(err, requestId, log);
  } finally {
    // JSON-response mode resolves only once every reply is written, so nothing is cut short here.
    await server.close().catch((err: unknown) => log.warn('mcp server close failed', { internal: describeError(err) }));
  }
}

/**
 * The MCP endpoint with API-key authentication: `Authorization: Bearer <API key>`. Answers 401 with the OAuth
 * discovery challenge when the key is missing, invalid or revoked.
 */
export async function serveMcpWithApiKey(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  const requestId = newRequestId();
  let principal: Principal;
  try {
    principal = await authenticateApiKey(env, bearerToken(request.headers.get('authorization')), Date.now(), (p) =>
      ctx.waitUntil(p),
    );
  } catch (err) {
    if (err instanceof ApiError && err.code === 'UNAUTHORIZED') return mcpUnauthorizedResponse(request, requestId, err);
    return mcpErrorResponse(err, requestId);
  }
  return handleMcpRequest(request, env, ctx, principal, requestId);
}
