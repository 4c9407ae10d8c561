import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv, AppOpenAPI } from './app-env';
import { authenticateApiKey } from './auth/api-keys';
import { bearerOf, currentScope, inRequestScope, newRequestScope, requestScope } from './context';
import { ApiError } from './errors';
import { errorResponse, validationHook } from './http/respond';
import { API_PREFIX, MAX_BODY_BYTES, OPENAPI_PATH } from './constants';
import { registerWebRoutes, type ConsolePage } from './web/register';

/** `waitUntil` of the request's execution context; none when the app is called directly in a unit test. */
function waitUntilOf(c: Context<AppEnv>, p: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(p);
  } catch {
    // No execution context (direct app.request in a unit test): let the promise run on its own.
    void p;
  }
}

function routePatternToRegExp(path: string): RegExp {
  const src = path.replace(/[.+?^$()[\]\\|]/g, '\\$&').replace(/\{[^}]+\}|:[A-Za-z_]\w*/g, '[^/]+');
  return new RegExp(`^${src}/?$`);
}

/** What the app serves besides its own middleware: handed over by the composition root (src/composition.ts). */
export interface AppParts {
  /** Each REST feature's registration, in the order the OpenAPI document lists them. */
  restRoutes: readonly ((app: AppOpenAPI) => void)[];
  /** The console's pages under /admin. */
  consolePages: readonly ConsolePage[];
}

/**
 * The document's tags, each operation's `tags` naming one of them (Spectral's operation-tag-defined checks it), in
 * the order a reader meets them.
 */
const OPENAPI_TAGS = [
  { name: 'Brands', description: 'The brands a key can access; each is one BigQuery dataset.' },
  { name: 'Reports', description: 'Reports: instructions, a dashboard configuration and runnable sections.' },
  { name: 'Queries', description: 'Saved queries, and running read-only SQL or a stored query against a brand.' },
  { name: 'Tables', description: "A brand's tables and their columns, as the warehouse describes them." },
  { name: 'Memories', description: 'Notes on what a table means and how to analyze it, scoped like reports.' },
  { name: 'Feedback', description: 'Reporting a data issue to the data team.' },
];

export function createApp(parts: AppParts): AppOpenAPI {
  const app = new OpenAPIHono<AppEnv>({
    // One format for every validation failure: 400 VALIDATION naming the parameter(s).
    defaultHook: validationHook,
  });

  app.use('*', async (c, next) => {
    // The request's scope is the one the Worker front built (src/oauth/worker.ts); the app called on its own
    // (app.request in tests) builds one the same way, with an id of its own.
    let scope = requestScope();
    if (scope) await next();
    else {
      scope = newRequestScope(c.req.raw, c.env, new URL(c.req.url).origin, (p) => waitUntilOf(c, p));
      await inRequestScope(scope, next);
    }
    c.res.headers.set('x-request-id', scope.requestId);
  });

  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => errorResponse(c, new ApiError('PAYLOAD_TOO_LARGE', `request body is larger than ${MAX_BODY_BYTES} bytes`)),
    }),
  );

  // Every /v1/data route but the OpenAPI document needs an API key. (The MCP endpoint is routed before this
  // app by src/index.ts, where OAuth tokens are also accepted.)
  app.use(`${API_PREFIX}/*`, async (c, next) => {
    if (c.req.path === OPENAPI_PATH) return next();
    const scope = currentScope();
    const principal = await authenticateApiKey(scope.env, bearerOf(scope), Date.now(), scope.waitUntil);
    return inRequestScope({ ...scope, principal }, next);
  });

  // Liveness probe and the benchmark's baseline: a constant body through the same middleware, no auth, no I/O.
  app.get('/healthz', (c) => c.json({ ok: true }, 200));

  for (const register of parts.restRoutes) register(app);
  // Server-rendered /admin and /authorize pages (plain routes, not in the OpenAPI document).
  registerWebRoutes(app, parts.consolePages);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key (or, on the MCP endpoint, an OAuth access token): `Authorization: Bearer <API_KEY>`',
  });
  app.doc31(OPENAPI_PATH, (c) => ({
    openapi: '3.1.0',
    info: {
      title: 'Read-Only Data Warehouse Query API',
      version: '1.0.0',
      description:
        'Read-only access to a BigQuery warehouse organised by brand. Every response carries `x-request-id`; ' +
        'errors are `{ error: { code, message, requestId, details? } }`.',
      // The people to ask are the deployment's own administrators, who sign in to its console.
      contact: { name: 'The administrators of this deployment', url: `${new URL(c.req.url).origin}/admin` },
    },
    tags: OPENAPI_TAGS,
    servers: [{ url: new URL(c.req.url).origin }],
    security: [{ bearerAuth: [] }],
  }));

  app.notFound((c) => {
    const allowed = new Set<string>();
    for (const r of app.routes) {
      if (r.method === 'ALL' || r.path.includes('*')) continue;
      if (routePatternToRegExp(r.path).test(c.req.path)) allowed.add(r.method.toUpperCase());
    }
    if (allowed.size > 0) {
      const res = errorResponse(
        c,
        new ApiError('METHOD_NOT_ALLOWED', `method ${c.req.method} is not allowed on ${c.req.path}; allowed: ${[...allowed].join(', ')}`),
      );
      res.headers.set('allow', [...allowed].join(', '));
      return res;
    }
    return errorResponse(c, new ApiError('NOT_FOUND', `no route for ${c.req.method} ${c.req.path}`));
  });

  app.onError((err, c) => {
    if (err instanceof HTTPException) {
      // hono's own 4xx (malformed JSON, wrong content type) carry a safe message.
      const status = err.status;
      const code =
        status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status === 413 ? 'PAYLOAD_TOO_LARGE' : status < 500 ? 'VALIDATION' : 'INTERNAL';
      return errorResponse(c, new ApiError(code, status < 500 ? err.message : 'internal error', { internal: err }));
    }
    return errorResponse(c, err);
  });

  return app;
}
