import { Hono } from 'hono';
import type { AppEnv, AppOpenAPI } from '../app-env';
import { useHtmlDefaults } from './guards';
import { notFoundRoutes } from './pages/not-found.page';
import { authorizeRoutes } from './pages/consent.page';
import { loginRoutes } from './pages/login.page';

/** One console page: registers its routes on the /admin sub-app. The list is the composition root's (src/composition.ts). */
export type ConsolePage = (admin: Hono<AppEnv>) => void;

/**
 * The server-rendered pages: /admin (the sign-in page, then the console's pages) and /authorize (OAuth sign-in and
 * consent). Plain Hono routes, so they stay out of the OpenAPI document. Every sub-app shares the HTML defaults
 * (form size limit, same-origin POSTs, an HTML error page).
 */
export function registerWebRoutes(app: AppOpenAPI, consolePages: readonly ConsolePage[]): void {
  const admin = new Hono<AppEnv>();
  useHtmlDefaults(admin);
  loginRoutes(admin);
  for (const register of consolePages) register(admin);
  notFoundRoutes(admin);
  app.route('/admin', admin);

  const authorize = new Hono<AppEnv>();
  useHtmlDefaults(authorize);
  authorizeRoutes(authorize);
  app.route('/authorize', authorize);
}
