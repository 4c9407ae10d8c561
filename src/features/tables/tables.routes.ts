import { createRoute } from '@hono/zod-openapi';
import type { AppOpenAPI, AppRouteHandler } from '../../app-env';
import { opContext } from '../../context';
import { errorResponses, okJson } from '../../schemas/common';
import { describeTable } from './describe-table';
import { listTables } from './list-tables';
import { BrandParamsSchema, TableDescriptionSchema, TableListSchema, TableParamsSchema } from './tables.schemas';

const NO_RUN =
  "Read from BigQuery's table metadata (tables.list / tables.get), not by a query: it spends no run of the daily " +
  'usage limit, bills nothing and writes no query log row.';

export const list = createRoute({
  method: 'get',
  path: '/v1/data/brands/{brandId}/tables',
  operationId: 'listTables',
  tags: ['Tables'],
  summary: "Extension: list a brand's tables",
  description: `Every table of the brand's dataset with its description, layer, row count and the days it covers. ${NO_RUN}`,
  security: [{ bearerAuth: [] }],
  request: { params: BrandParamsSchema },
  responses: {
    ...okJson(TableListSchema, "The brand's tables"),
    ...errorResponses(
      'VALIDATION',
      'UNAUTHORIZED',
      'FORBIDDEN_BRAND',
      'BRAND_NOT_PROVISIONED',
      'WAREHOUSE_ERROR',
      'WAREHOUSE_UNAVAILABLE',
      'WAREHOUSE_TIMEOUT',
    ),
  },
});

export const describe = createRoute({
  method: 'get',
  path: '/v1/data/brands/{brandId}/tables/{table}',
  operationId: 'describeTable',
  tags: ['Tables'],
  summary: 'Extension: describe one table (columns, description, coverage, memories)',
  description:
    "A table's columns with types and descriptions, its description and layer, row count, the days it covers when its " +
    `labels say, and the memories that apply to it (system and organization ones included, each once). ${NO_RUN}`,
  security: [{ bearerAuth: [] }],
  request: { params: TableParamsSchema },
  responses: {
    ...okJson(TableDescriptionSchema, 'The table'),
    ...errorResponses(
      'VALIDATION',
      'UNAUTHORIZED',
      'FORBIDDEN_BRAND',
      'NOT_FOUND',
      'BRAND_NOT_PROVISIONED',
      'WAREHOUSE_ERROR',
      'WAREHOUSE_UNAVAILABLE',
      'WAREHOUSE_TIMEOUT',
    ),
  },
});

const listHandler: AppRouteHandler<typeof list> = async (c) => c.json(await listTables(opContext('rest'), c.req.valid('param')), 200);
const describeHandler: AppRouteHandler<typeof describe> = async (c) =>
  c.json(await describeTable(opContext('rest'), c.req.valid('param')), 200);

export function registerTableRoutes(app: AppOpenAPI) {
  return app.openapi(list, listHandler).openapi(describe, describeHandler);
}
