import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerBrandTools } from './brands.tools';
import { registerFeedbackTools } from './feedback.tools';
import { registerMemoryTools } from './memories.tools';
import { registerQueryTools } from './query.tools';
import { registerReportTools } from './reports.tools';
import { registerSavedQueryTools } from './saved-queries.tools';
import { FLOWS, PAGING, READ_MEMORIES, STATEMENT_RULE, TABLE_DISCOVERY, TABLE_NAMING } from './guidance';
import type { ToolDeps } from './tool-result';

export const SERVER_INSTRUCTIONS = [
  'Read-only access to a data warehouse organised by brand. Start with list_brands.',
  FLOWS,
  TABLE_NAMING,
  TABLE_DISCOVERY,
  READ_MEMORIES,
  `${STATEMENT_RULE} Use dryRun to check a query and its bytes scanned before running it; runs count against a daily usage limit.`,
  PAGING,
  'Errors come back as tool results with isError and { error: { code, message, requestId } }; quote requestId to support.',
].join('\n');

/**
 * One MCP server for one request (stateless): every tool group bound to this request's operation context, so
 * the tools see exactly the principal the transport authenticated.
 */
export function createMcpServer(deps: ToolDeps): McpServer {
  const server = new McpServer(
    { name: 'warehouse-query-api', title: 'Warehouse Query API', version: '1.0.0' },
    // The body limit already bounds arguments; this bounds the work of validating deeply nested ones.
    { instructions: SERVER_INSTRUCTIONS, maxToolInputElements: 10_000 },
  );
  registerBrandTools(server, deps);
  registerReportTools(server, deps);
  registerSavedQueryTools(server, deps);
  registerQueryTools(server, deps);
  registerFeedbackTools(server, deps);
  registerMemoryTools(server, deps);
  return server;
}
