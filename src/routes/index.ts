import type { AppOpenAPI } from '../app-env';
import { registerBrandRoutes } from './brands/brands.index';
import { registerFeedbackRoutes } from './feedback/feedback.index';
import { registerSavedQueryRoutes } from './queries/queries.index';
import { registerQueryRoutes } from './query/query.index';
import { registerReportRoutes } from './reports/reports.index';

/** Every REST feature registers here; adding an endpoint touches its three files and this list. */
export function registerRoutes(app: AppOpenAPI) {
  registerBrandRoutes(app);
  registerReportRoutes(app);
  registerSavedQueryRoutes(app);
  registerQueryRoutes(app);
  registerFeedbackRoutes(app);
}
