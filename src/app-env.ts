import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { Principal } from './auth/principal';
import type { Env } from './env';
import type { Logger } from './lib/log';

export interface AppVariables {
  requestId: string;
  log: Logger;
  /** Set by the auth middleware on every authenticated route. */
  principal: Principal;
}

export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}

export type AppOpenAPI = OpenAPIHono<AppEnv>;
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;
