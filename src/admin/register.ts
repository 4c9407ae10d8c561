import type { AppOpenAPI } from '../app-env';
import { createAuthorizeRoutes } from '../oauth/authorize.routes';
import { createAdminRoutes } from './admin.routes';

/**
 * The server-rendered pages: /admin (keys and connected assistants) and /authorize (OAuth sign-in and consent).
 * Plain Hono routes, so they stay out of the OpenAPI document.
 */
export function registerAdminRoutes(app: AppOpenAPI): void {
  app.route('/admin', createAdminRoutes());
  app.route('/authorize', createAuthorizeRoutes());
}
