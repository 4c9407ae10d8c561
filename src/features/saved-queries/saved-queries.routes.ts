import { createRoute, z } from '@hono/zod-openapi';
import { QueryListSchema } from '../../schemas/catalog';
import { BrandIdQuery, errorResponses, okJson } from '../../schemas/common';
import type { AppOpenAPI, AppRouteHandler } from '../../app-env';
import { listSavedQueries } from './saved-queries';
import { opContext } from '../../context';

export const list = createRoute({
  method: 'get',
  path: '/v1/data/queries',
  operationId: 'listSavedQueries',
  tags: ['Queries'],
  summary: "List a brand's saved queries",
  description:
    'Standalone saved queries (not part of a report). They are concrete and runnable by `id` as they are. An organization ' +
    'key that omits `brandId` gets the saved queries of all its brands, ordered by brand; every item names its owning ' +
    '`brandId` (an extension of the Query fields), which is also the brand a run by `id` resolves against.',
  security: [{ bearerAuth: [] }],
  request: { query: z.object({ brandId: BrandIdQuery }) },
  responses: {
    ...okJson(QueryListSchema, 'The saved queries'),
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'FORBIDDEN_BRAND'),
  },
});

const listHandler: AppRouteHandler<typeof list> = async (c) => c.json(await listSavedQueries(opContext('rest'), c.req.valid('query')), 200);

export function registerSavedQueryRoutes(app: AppOpenAPI) {
  return app.openapi(list, listHandler);
}
