import { createApp } from './app';
import { SERVICE } from './composition';
import type { Env } from './env';
import { handleQueueBatch } from './queue';
import { archiveQueryLog, refreshPlannerStatistics } from './features/query-history/retention';
import { createLogger } from './lib/log';
import { createWorker } from './oauth/worker';

export { RefreshTokenGate } from './oauth/refresh-gate';
export { UsageLimiter } from './usage/usage-limiter';
export { QueryJobAlarm } from './features/query-jobs/job-alarm';

const app = createApp(SERVICE);

// OAuthProvider fronts the Worker: OAuth discovery, registration, token and revocation endpoints, and bearer checks
// on /v1/data/mcp (OAuth access tokens or API keys); everything else (REST, /authorize, /admin) is the Hono app.
// Origin/CORS, refresh-token reuse detection and the REST 401 challenge are applied around both (src/oauth/worker.ts).
const worker = createWorker({
  defaultHandler: { fetch: async (request, env, ctx) => app.fetch(request, env, ctx) },
  mcpTools: SERVICE.mcpTools,
});

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    return worker.fetch(request, env, ctx);
  },
  // Cloudflare Queues consumer: query_log rows in batches, webhook notifications of filed data-issue reports.
  queue(batch: MessageBatch<unknown>, env: Env) {
    return handleQueueBatch(batch, env);
  },
  // Cron triggers (wrangler.toml [triggers]): query_log rows past QUERY_LOG_RETENTION_DAYS move to R2, then the
  // query planner's statistics are refreshed (also when the pass failed; its error still fails the invocation).
  async scheduled(controller: ScheduledController, env: Env) {
    const log = createLogger(`cron:${controller.cron}`);
    try {
      await archiveQueryLog(env, controller.scheduledTime, log);
    } finally {
      await refreshPlannerStatistics(env, log);
    }
  },
} satisfies ExportedHandler<Env>;
