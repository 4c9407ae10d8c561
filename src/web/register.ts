import { Hono } from 'hono';
import type { AppEnv, AppOpenAPI } from '../app-env';
import { useHtmlDefaults } from './guards';
import { assistantsRoutes } from '../features/assistants/assistants.page';
import { notFoundRoutes } from './pages/not-found.page';
import { authorizeRoutes } from './pages/consent.page';
import { keyCreatedRoutes } from '../features/keys/key-created.page';
import { keysRoutes } from '../features/keys/keys.page';
import { loginRoutes } from './pages/login.page';
import { memoriesRoutes } from '../features/memories/memories.page';
import { historyRoutes } from '../features/query-history/history.page';
import { inboxRoutes } from '../features/feedback-inbox/inbox.page';
import { catalogRoutes } from '../features/catalog-files/catalog.page';
import { searchRoutes } from '../features/search/search.page';
import { notificationsRoutes } from '../features/notifications/notifications.page';

/**
 * The pages under /admin. Each *.page.tsx (src/web/pages/, src/features/<feature>/) is one page: its view and the routes that serve it.
 *
 * Adding a page (e.g. Memories):
 * 1. write `src/features/memories/memories.page.tsx` exporting `memoriesRoutes(admin)`: its GET guarded by `requireAdmin`,
 *    each POST by `requireAdminPost` (session, CSRF, administrator), rendered with `renderPage` in
 *    `<AdminPage current="memories">` (layout.tsx); a destructive action goes through `ConfirmPage`; a POST that
 *    changes something answers 303 to a GET (a one-time value goes through flash.ts);
 * 2. add `{ id: 'memories', href: '/admin/memories', label: 'Memories' }` to ADMIN_NAV in src/web/nav.ts;
 * 3. add `memoriesRoutes` to ADMIN_PAGES below.
 */
const ADMIN_PAGES: ((admin: Hono<AppEnv>) => void)[] = [
  loginRoutes,
  keysRoutes,
  keyCreatedRoutes,
  assistantsRoutes,
  memoriesRoutes,
  inboxRoutes,
  notificationsRoutes,
  historyRoutes,
  catalogRoutes,
  searchRoutes,
];

/**
 * The server-rendered pages: /admin (keys and connected assistants) and /authorize (OAuth sign-in and consent).
 * Plain Hono routes, so they stay out of the OpenAPI document. Every sub-app shares the HTML defaults (form size
 * limit, same-origin POSTs, an HTML error page).
 */
export function registerWebRoutes(app: AppOpenAPI): void {
  const admin = new Hono<AppEnv>();
  useHtmlDefaults(admin);
  for (const register of ADMIN_PAGES) register(admin);
  notFoundRoutes(admin);
  app.route('/admin', admin);

  const authorize = new Hono<AppEnv>();
  useHtmlDefaults(authorize);
  authorizeRoutes(authorize);
  app.route('/authorize', authorize);
}
