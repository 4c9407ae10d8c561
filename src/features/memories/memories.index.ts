import type { AppOpenAPI } from '../../app-env';
import * as handlers from './memories.handlers';
import * as routes from './memories.routes';

export function registerMemoryRoutes(app: AppOpenAPI) {
  return app
    .openapi(routes.list, handlers.list)
    .openapi(routes.create, handlers.create)
    .openapi(routes.get, handlers.get)
    .openapi(routes.update, handlers.update)
    .openapi(routes.remove, handlers.remove);
}
