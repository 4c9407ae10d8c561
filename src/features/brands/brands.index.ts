import type { AppOpenAPI } from '../../app-env';
import * as handlers from './brands.handlers';
import * as routes from './brands.routes';

export function registerBrandRoutes(app: AppOpenAPI) {
  return app.openapi(routes.list, handlers.list);
}
