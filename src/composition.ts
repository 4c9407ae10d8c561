import type { Hono } from 'hono';
import type { AppEnv, AppOpenAPI } from './app-env';
import { catalogRoutes } from './features/catalog-files/catalog.page';
import { assistantsRoutes } from './features/assistants/assistants.page';
import { listBrandsTool } from './features/brands/brands.tools';
import { registerBrandRoutes } from './features/brands/brands.routes';
import { getDataIssueTool, reportDataIssueTool } from './features/feedback/feedback.tools';
import { registerFeedbackRoutes } from './features/feedback/feedback.routes';
import { inboxRoutes } from './features/feedback-inbox/inbox.page';
import { notificationsRoutes } from './features/notifications/notifications.page';
import { keyCreatedRoutes } from './features/keys/key-created.page';
import { keysRoutes } from './features/keys/keys.page';
import { listMemoriesTool, saveMemoryTool } from './features/memories/memories.tools';
import { registerMemoryRoutes } from './features/memories/memories.routes';
import { memoriesRoutes } from './features/memories/memories.page';
import { runQueryTool } from './features/query/query.tools';
import { registerRunQueryRoutes } from './features/query/run-query.routes';
import { registerQueryJobRoutes } from './features/query-jobs/query-jobs.routes';
import { historyRoutes } from './features/query-history/history.page';
import { jobsRoutes } from './features/query-jobs/jobs.page';
import { getReportTool, listReportQueriesTool, listReportsTool } from './features/reports/reports.tools';
import { registerReportRoutes } from './features/reports/reports.routes';
import { showReportTool } from './features/reports/report-view.tools';
import { listSavedQueriesTool } from './features/saved-queries/saved-queries.tools';
import { registerSavedQueryRoutes } from './features/saved-queries/saved-queries.routes';
import { searchRoutes } from './features/search/search.page';
import { fetchTool, searchTool } from './features/search/search.tools';
import { describeTableTool } from './features/tables/tables.tools';
import { registerTableRoutes } from './features/tables/tables.routes';
import type { Tool } from './mcp/define-tool';

/**
 * The composition root: the one list of what the Worker serves, above the features it names. The platform
 * (src/app.ts, src/mcp/, src/web/, src/oauth/) is handed these lists by src/index.ts and imports no feature.
 */

/** Every REST feature's routes, in the order the OpenAPI document lists them. */
export const REST_ROUTES: readonly ((app: AppOpenAPI) => void)[] = [
  registerBrandRoutes,
  registerReportRoutes,
  registerSavedQueryRoutes,
  registerRunQueryRoutes,
  registerQueryJobRoutes,
  registerFeedbackRoutes,
  registerMemoryRoutes,
  registerTableRoutes,
];

/** Every MCP tool, in the order tools/list shows them. A new tool is one defineTool in its feature folder and one entry here. */
export const MCP_TOOLS: readonly Tool[] = [
  listBrandsTool,
  describeTableTool,
  listReportsTool,
  getReportTool,
  listReportQueriesTool,
  listSavedQueriesTool,
  runQueryTool,
  reportDataIssueTool,
  getDataIssueTool,
  searchTool,
  fetchTool,
  listMemoriesTool,
  saveMemoryTool,
  showReportTool,
];

/**
 * The console's pages under /admin (the sign-in page and the 404 are the web shell's own, src/web/register.ts).
 * Each *.page.tsx is one page: its view and the routes that serve it.
 *
 * Adding a page (e.g. Memories):
 * 1. write `src/features/memories/memories.page.tsx` exporting `memoriesRoutes(admin)`: its GET guarded by `requireAdmin`,
 *    each POST by `requireAdminPost` (session, CSRF, administrator), rendered with `renderPage` in
 *    `<AdminPage current="memories">` (layout.tsx); a destructive action goes through `ConfirmPage`; a POST that
 *    changes something answers 303 to a GET (a one-time value goes through flash.ts);
 * 2. add `{ id: 'memories', href: '/admin/memories', label: 'Memories' }` to ADMIN_NAV in src/web/nav.ts;
 * 3. add `memoriesRoutes` to CONSOLE_PAGES below.
 */
export const CONSOLE_PAGES: readonly ((admin: Hono<AppEnv>) => void)[] = [
  keysRoutes,
  keyCreatedRoutes,
  assistantsRoutes,
  memoriesRoutes,
  inboxRoutes,
  notificationsRoutes,
  historyRoutes,
  jobsRoutes,
  catalogRoutes,
  searchRoutes,
];

/** What src/index.ts hands the platform: the REST app and the MCP endpoint are built from these lists. */
export const SERVICE = { restRoutes: REST_ROUTES, mcpTools: MCP_TOOLS, consolePages: CONSOLE_PAGES } as const;
