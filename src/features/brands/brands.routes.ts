import { createRoute, z } from '@hono/zod-openapi';
import { BrandSchema } from '../../schemas/catalog';
import { errorResponses, okJson } from '../../schemas/common';
import type { AppOpenAPI, AppRouteHandler } from '../../app-env';
import { listBrands } from './brands';
import { opContext } from '../../context';

export const list = createRoute({
  method: 'get',
  path: '/v1/data/brands',
  operationId: 'listBrands',
  tags: ['Brands'],
  summary: 'List the brands the key can access',
  description:
    'The brands the key can access: one for a brand key, every brand of the organization for an organization key. ' +
    'A brand id from here is the `brandId` other operations take.',
  security: [{ bearerAuth: [] }],
  responses: {
    ...okJson(z.object({ brands: z.array(BrandSchema) }), 'The brands the key can access'),
    ...errorResponses('UNAUTHORIZED'),
  },
});

const listHandler: AppRouteHandler<typeof list> = async (c) => c.json(await listBrands(opContext('rest')), 200);

export function registerBrandRoutes(app: AppOpenAPI) {
  return app.openapi(list, listHandler);
}
