import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { Env } from './env';

/** The app's bindings. Per-request state is not kept on Hono's context: it is the request's scope (src/context.ts). */
export interface AppEnv {
  Bindings: Env;
}

export type AppOpenAPI = OpenAPIHono<AppEnv>;
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;
