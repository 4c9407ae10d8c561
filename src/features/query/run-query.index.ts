import type { Context } from 'hono';
import type { AppEnv, AppOpenAPI } from '../../app-env';
import { validationFailure } from '../../http/respond';
import { RawSqlQuerySchema, StoredQuerySchema } from './run-query.schemas';
import * as handlers from './run-query.handlers';
import * as routes from './run-query.routes';

/**
 * The body is a union of two strict shapes; zod's union error lists both branches, which reads badly.
 * Word it for the branch the caller meant (by `sql` / `queryId`), then format it like every other failure.
 */
async function unionFailure(error: Parameters<typeof validationFailure>[0], target: string, c: Context<AppEnv>): Promise<Response> {
  if (target !== 'json') return validationFailure(error, target, c);
  const body: unknown = await c.req.json().catch(() => undefined);
  const isObj = typeof body === 'object' && body !== null && !Array.isArray(body);
  const hasSql = isObj && 'sql' in body;
  const hasQueryId = isObj && 'queryId' in body;
  const only = (message: string) => ({ issues: [{ path: [], message }] });
  if (hasSql && hasQueryId) return validationFailure(only('send either sql or queryId, not both'), target, c);
  if (!hasSql && !hasQueryId) return validationFailure(only('sql or queryId is required'), target, c);
  const branch = (hasSql ? RawSqlQuerySchema : StoredQuerySchema).safeParse(body);
  return validationFailure(branch.success ? error : branch.error, target, c);
}

export function registerRunQueryRoutes(app: AppOpenAPI) {
  return app
    .openapi(routes.run, handlers.run, (result, c) => (result.success ? undefined : unionFailure(result.error, result.target, c)))
    .openapi(routes.page, handlers.page);
}
