import type { AppOpenAPI } from '../../app-env';
import * as handlers from './queries.handlers';
import * as routes from './queries.routes';

export function registerSavedQueryRoutes(app: AppOpenAPI) {
  return app.openapi(routes.list, handlers.list);
}
