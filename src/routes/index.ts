import type { AppOpenAPI } from '../app-env';
import { registerBrandRoutes } from '../features/brands/brands.index';
import { registerFeedbackRoutes } from '../features/feedback/feedback.index';
import { registerSavedQueryRoutes } from '../features/saved-queries/saved-queries.index';
import { registerRunQueryRoutes } from '../features/query/run-query.index';
import { registerQueryJobRoutes } from '../features/query-jobs/query-jobs.index';
import { registerReportRoutes } from '../features/reports/reports.index';
import { registerMemoryRoutes } from '../features/memories/memories.index';
import { registerTableRoutes } from '../features/tables/tables.routes';

/** Every REST feature registers here; adding an endpoint touches its three files and this list. */
export function registerRoutes(app: AppOpenAPI) {
  registerBrandRoutes(app);
  registerReportRoutes(app);
  registerSavedQueryRoutes(app);
  registerRunQueryRoutes(app);
  registerQueryJobRoutes(app);
  registerFeedbackRoutes(app);
  registerMemoryRoutes(app);
  registerTableRoutes(app);
}
