import { McpServer } from '@modelcontextprotocol/server';
import { BRAND_ID_RULE, FLOWS, PAGING, STATEMENT_RULE, TABLE_DISCOVERY, TABLE_NAMING } from './guidance';
import { SUPPORTED_PROTOCOL_VERSIONS } from './protocol';
import { registerTools, type Tool } from './define-tool';
import { TASKS_EXTENSION } from './tasks';
import type { ToolDeps } from './tool-result';
import { registerViews } from './views';

export const SERVER_INSTRUCTIONS = [
  'Read-only SQL over a data warehouse organised by brand. Start with list_brands.',
  FLOWS,
  TABLE_NAMING,
  TABLE_DISCOVERY,
  `${STATEMENT_RULE} dryRun: true checks a query and its bytes scanned without running it. ` +
    'Runs count against a daily usage limit; prefer aggregates.',
  `${PAGING} Paging in SQL instead: ORDER BY a unique key plus LIMIT n OFFSET m.`,
  BRAND_ID_RULE,
  'Errors: isError results with { error: { code, message, requestId } }; quote requestId.',
].join('\n');

/**
 * Tasks in both eras (src/mcp/tasks.ts): the 2026-07-28 extension, and the 2025-11-25 experimental capability (tools
 * calls, list, cancel), which the SDK's 2026 codec strips from 2026 answers (SEP-2663 removed it from core).
 */
const TASK_CAPABILITIES = {
  extensions: { [TASKS_EXTENSION]: {} },
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
} as const;

/** Per client (private): a deploy may change the tools, so an hour at most. */
const TOOLS_CACHE_HINT = { ttlMs: 3_600_000, cacheScope: 'private' } as const;

/**
 * One MCP server for one request (stateless): every tool group bound to this request's operation context, so
 * the tools see exactly the principal the transport authenticated.
 */
export function createMcpServer(deps: ToolDeps, tools: readonly Tool[]): McpServer {
  const server = new McpServer(
    { name: 'warehouse-query-api', title: 'Warehouse Query API', version: '1.0.0' },
    {
      instructions: SERVER_INSTRUCTIONS,
      // The tool set never changes while a client is connected (stateless, one server per request): advertise no
      // list_changed notifications we would never send.
      capabilities: {
        tools: { listChanged: false },
        resources: { listChanged: false },
        ...(tools.some((t) => t.taskSource(deps) !== undefined) ? TASK_CAPABILITIES : {}),
      },
      supportedProtocolVersions: SUPPORTED_PROTOCOL_VERSIONS,
      // 2026-07-28 cache hints: the tool list and instructions only change with a deploy.
      cacheHints: { 'tools/list': TOOLS_CACHE_HINT, 'server/discover': TOOLS_CACHE_HINT },
      // The body limit already bounds arguments; this bounds the work of validating deeply nested ones.
      maxToolInputElements: 10_000,
    },
  );
  registerTools(server, deps, tools);
  registerViews(server, deps);
  return server;
}
