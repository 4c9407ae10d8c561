import type { AppOpenAPI } from '../app-env';
import { registerBrandRoutes } from './brands/brands.index';

/** Every REST feature registers here; adding an endpoint touches its three files and this list. */
export function registerRoutes(app: AppOpenAPI) {
  registerBrandRoutes(app);
}
