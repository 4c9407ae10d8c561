import { createRoute, z } from '@hono/zod-openapi';
import { BrandSchema } from '../../schemas/catalog';
import { errorResponses, okJson } from '../../schemas/common';

export const list = createRoute({
  method: 'get',
  path: '/v1/data/brands',
  operationId: 'listBrands',
  tags: ['Brands'],
  summary: 'List the brands the key can access',
  security: [{ bearerAuth: [] }],
  responses: {
    ...okJson(z.object({ brands: z.array(BrandSchema) }), 'The brands the key can access'),
    ...errorResponses('UNAUTHORIZED'),
  },
});

export type ListRoute = typeof list;
