import {
  createMcpHandler,
  type McpServer,
  isJsonContentType,
  isLegacyRequest,
  readRequestBody,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { AsyncLocalStorage } from 'node:async_hooks';
import { MAX_BODY_BYTES, MCP_PATH } from '../constants';
import type { Principal } from '../auth/principal';
import { ApiError, describeError, errorReportResponse, reportError } from '../errors';
import { createLogger, type Logger } from '../lib/log';
import { currentScope, inRequestScope, opContext, requestScope } from '../context';
import type { TaskMode, ToolDeps } from './tool-result';
import { batchesAllowed } from './protocol';
import { offeredTools, type Tool } from './define-tool';
import { createMcpServer } from './server';
import { taskModeOf } from './tasks';
import { z } from 'zod';

/** Path of the MCP endpoint (docs/api.md, MCP), defined in the leaf src/constants.ts. */
export { MCP_PATH };

/**
 * Our error body and status for an HTTP-level failure on the MCP endpoint, with x-request-id and the error's
 * headers; logged once by the shared reporter.
 */
export function mcpErrorResponse(err: unknown, requestId: string, log: Logger = createLogger(requestId)): Response {
  return errorReportResponse(reportError(err, requestId, log, { transport: 'mcp' }));
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

/** A JSON-RPC error answered at the HTTP level (no request id to echo unless given: the message was refused before dispatch). */
function jsonRpcError(status: number, code: number, message: string, data?: unknown, id: unknown = null): Response {
  return Response.json({ jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined ? { data } : {}) } }, { status });
}

/**
 * SEP-1686: a 2025 `tools/call` asking for a task of a tool whose `execution.taskSupport` does not allow it gets
 * -32601. The JSON-RPC answer to that request (HTTP 200, as the transport answers its other errors), or undefined.
 */
function refusedTask(parsed: unknown, tools: readonly Tool[]): Response | undefined {
  const call = z.object({ id: z.union([z.string(), z.number()]), params: z.object({ name: z.string() }) }).safeParse(parsed);
  if (!call.success || tools.find((t) => t.name === call.data.params.name)?.experimentalTasks !== false) return undefined;
  return jsonRpcError(200, -32601, `Method not found: tool ${call.data.params.name} does not run as a task`, undefined, call.data.id);
}

/**
 * Serves one MCP request for an already authenticated principal: API key or OAuth, this function does not care
 * which (src/oauth/ authenticates, and answers 401 with the discovery challenge, before calling it).
 *
 * Both protocol eras from one endpoint, with the same tools (one factory):
 * - 2026-07-28 (`_meta` envelope on every request, `server/discover`, `Mcp-Method`/`Mcp-Name` headers): the SDK's
 *   `createMcpHandler`, strict (`legacy: 'reject'`), which validates the envelope and headers itself.
 * - 2025-11-25 / 2025-06-18 / 2025-03-26 (`initialize`): the SDK's Streamable HTTP transport, stateless, JSON
 *   responses, routed here with the SDK's own `isLegacyRequest` so the two legs can never disagree.
 * Stateless either way: a fresh McpServer per request. Every response carries `x-request-id`; HTTP-level failures
 * of our own use our error body, JSON-RPC failures stay JSON-RPC.
 */
export function handleMcpRequest(request: Request, principal: Principal, allTools: readonly Tool[]): Promise<Response> {
  return inRequestScope({ ...currentScope(), principal }, () => serveMcp(request, allTools));
}

async function serveMcp(request: Request, allTools: readonly Tool[]): Promise<Response> {
  const ctx = opContext('mcp');
  const { requestId, log } = ctx;
  if (request.method !== 'POST') return methodNotAllowed(request.method, requestId);

  const deps: ToolDeps = { ctx };
  // Each principal is offered only the tools it may use (a key that cannot write memories never sees save_memory).
  let tools: Awaited<ReturnType<typeof offeredTools>>;
  try {
    tools = await offeredTools(deps, allTools);
  } catch (err) {
    return mcpErrorResponse(err, requestId, log);
  }
  const factory = (task?: TaskMode) => createMcpServer(task ? { ...deps, task } : deps, tools);
  const onerror = (err: Error) => log.info('mcp request refused', { internal: describeError(err) });
  try {
    const res = await route(request, tools, factory, onerror);
    // Re-wrap: the SDK's Response may have immutable headers on some runtimes.
    const out = new Response(res.body, res);
    out.headers.set('x-request-id', requestId);
    return out;
  } catch (err) {
    return mcpErrorResponse(err, requestId, log);
  }
}

/**
 * The server factory of the request the one modern handler is serving: the handler calls back with the request's
 * info only, and requests interleave in an isolate, so the factory travels with the request's async context.
 */
const modernFactory = new AsyncLocalStorage<() => McpServer>();

type ServerFactory = (task?: TaskMode) => McpServer;

function currentFactory(): McpServer {
  const factory = modernFactory.getStore();
  if (!factory) throw new Error('mcp: no server factory for this request');
  return factory();
}

/** Logs a refusal of the modern handler with the id of the request it was serving (its scope's logger). */
function logRefusal(err: Error): void {
  (requestScope()?.log ?? createLogger('mcp')).info('mcp request refused', { internal: describeError(err) });
}

/**
 * One 2026-07-28 handler per isolate (building one per request cost more than the tool call it served); each
 * request still gets a fresh McpServer bound to its own principal, through its factory above.
 */
const modernHandler = createMcpHandler(() => currentFactory(), {
  legacy: 'reject',
  maxRequestBodySize: MAX_BODY_BYTES,
  // Refusals (bad envelope, wrong headers) are answered to the client and logged with the request's id.
  onerror: logRefusal,
});

async function route(request: Request, tools: readonly Tool[], factory: ServerFactory, onerror: (err: Error) => void): Promise<Response> {
  // A body that is not JSON goes to the 2025 transport unread: it answers 415 itself.
  if (!isJsonContentType(request.headers.get('content-type'))) return serveLegacy(request, undefined, factory, onerror);

  const body = await readRequestBody(request, MAX_BODY_BYTES);
  if (body.tooLarge) throw new ApiError('PAYLOAD_TOO_LARGE', `request body is larger than ${MAX_BODY_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.text);
  } catch {
    return jsonRpcError(400, -32700, 'Parse error: Invalid JSON');
  }

  if (!(await isLegacyRequest(request, parsed, { maxRequestBodySize: MAX_BODY_BYTES }))) {
    const task = taskModeOf(parsed, false);
    return modernFactory.run(
      () => factory(task),
      () => modernHandler.fetch(request, { parsedBody: parsed }),
    );
  }
  const task = taskModeOf(parsed, true);
  if (task) {
    const refused = refusedTask(parsed, tools);
    if (refused) return refused;
  }
  const version = request.headers.get('mcp-protocol-version');
  if (Array.isArray(parsed) && !batchesAllowed(version)) {
    return jsonRpcError(
      400,
      -32600,
      `Invalid Request: JSON-RPC batches are not allowed in protocol revision ${version}; send one message per POST`,
    );
  }
  return serveLegacy(request, parsed, () => factory(task), onerror);
}

async function serveLegacy(
  request: Request,
  parsedBody: unknown,
  factory: () => McpServer,
  onerror: (err: Error) => void,
): Promise<Response> {
  const server = factory();
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  transport.onerror = onerror;
  try {
    await server.connect(transport);
    return await transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
  } finally {
    // JSON-response mode resolves only once every reply is written, so nothing is cut short here.
    await server.close().catch(onerror);
  }
}
