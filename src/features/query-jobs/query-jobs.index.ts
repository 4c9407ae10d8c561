import type { AppOpenAPI } from '../../app-env';
import * as handlers from './query-jobs.handlers';
import * as routes from './query-jobs.routes';

export function registerQueryJobRoutes(app: AppOpenAPI) {
  return app.openapi(routes.get, handlers.get).openapi(routes.cancel, handlers.cancel);
}
