import type { AppOpenAPI } from '../../app-env';
import * as handlers from './saved-queries.handlers';
import * as routes from './saved-queries.routes';

export function registerSavedQueryRoutes(app: AppOpenAPI) {
  return app.openapi(routes.list, handlers.list);
}
