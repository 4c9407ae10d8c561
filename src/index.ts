import { createApp } from './app';
import type { Env } from './env';
import { MCP_PATH, serveMcpWithApiKey } from './mcp/handler';

export { UsageLimiter } from './usage/usage-limiter';

const app = createApp();

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    // MCP is served before the Hono app: its transport reads the raw request and answers JSON-RPC itself.
    if (new URL(request.url).pathname === MCP_PATH) return serveMcpWithApiKey(request, env, ctx);
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
