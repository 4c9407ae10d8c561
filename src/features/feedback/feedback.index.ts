import type { AppOpenAPI } from '../../app-env';
import * as handlers from './feedback.handlers';
import * as routes from './feedback.routes';

export function registerFeedbackRoutes(app: AppOpenAPI) {
  return app.openapi(routes.submit, handlers.submit).openapi(routes.get, handlers.get);
}
