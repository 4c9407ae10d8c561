import type { AppOpenAPI } from '../../app-env';
import * as handlers from './reports.handlers';
import * as routes from './reports.routes';

export function registerReportRoutes(app: AppOpenAPI) {
  return app.openapi(routes.list, handlers.list).openapi(routes.get, handlers.get).openapi(routes.listQueries, handlers.listQueries);
}
