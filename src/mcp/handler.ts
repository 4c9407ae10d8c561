import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { MAX_BODY_BYTES, MCP_PATH } from '../constants';
import type { Principal } from '../auth/principal';
import type { Env } from '../env';
import { ApiError, describeError, errorBody, toApiError } from '../errors';
import { createLogger, type Logger } from '../lib/log';
import type { OpContext } from '../operations/context';
import { createMcpServer } from './server';

/** Path of the MCP endpoint (spec section 8), defined in the leaf src/constants.ts. */
export { MCP_PATH };

/** Our error body and status for an HTTP-level failure on the MCP endpoint, with x-request-id and the error's headers. */
export function mcpErrorResponse(err: unknown, requestId: string, log: Logger = createLogger(requestId)): Response {
  const apiErr = toApiError(err);
  if (apiErr.status >= 500) log.error('mcp request failed', { code: apiErr.code, internal: describeError(apiErr.internal ?? err) });
  const headers = new Headers({ 'content-type': 'application/json', 'x-request-id': requestId });
  for (const [k, v] of Object.entries(apiErr.headers ?? {})) headers.set(k, v);
  return new Response(JSON.stringify(errorBody(apiErr, requestId)), { status: apiErr.status, headers });
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
 * Serves one MCP request for an already authenticated principal: API key or OAuth, this function does not care
 * which (src/oauth/ authenticates, and answers 401 with the discovery challenge, before calling it).
 * Stateless: a fresh McpServer and transport per request, JSON responses (no SSE). Every response carries
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
