import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, okJson } from '../../schemas/common';

export const BrandSchema = z
  .object({
    brandId: z.string().openapi({ example: 'brand_acme' }),
    name: z.string().nullable().openapi({ example: 'Acme Outdoor' }),
    dataset: z.string().nullable().openapi({ description: 'null when the brand has no provisioned dataset', example: 'acme' }),
  })
  .openapi('Brand');

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
