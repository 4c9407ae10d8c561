import { createRoute, z } from '@hono/zod-openapi';
import { REPORTS_PAGE } from './reports';
import { QueryListSchema, ReportDetailSchema, ReportListSchema, ReportTypeSchema } from '../../schemas/catalog';
import { BrandIdQuery, errorResponses, okJson } from '../../schemas/common';
import { cursorQuery, pageLimitQuery, ReportIdField } from '../../schemas/fields';
import type { AppOpenAPI, AppRouteHandler } from '../../app-env';
import { getReport, listReportQueries, listReports } from './reports';
import { opContext } from '../../context';

const ReportIdParams = z.object({
  reportId: ReportIdField.openapi({ param: { name: 'reportId', in: 'path' } }),
});

const ReportBrandQuery = z.object({
  brandId: BrandIdQuery.openapi({
    description:
      'Brand to view the report through. Required only for an organization key viewing an organization-wide (`org`) or ' +
      'shared (`system`) report; `brand` reports infer their brand.',
  }),
});

export const list = createRoute({
  method: 'get',
  path: '/v1/data/reports',
  operationId: 'listReports',
  tags: ['Reports'],
  summary: 'List the reports the key can see (metadata only)',
  description:
    'Own, organization and shared reports. Shared (`system`) reports appear once per brand, organization reports once per ' +
    'brand of the organization. Ordered by brandId, then type (system, org, brand), then reportId. Page with `cursor` ' +
    'until `nextCursor` is null. Reports of a brand without a provisioned dataset are listed with `runnable: false`: ' +
    'running their queries answers 409 `BRAND_NOT_PROVISIONED` until the dataset exists.',
  security: [{ bearerAuth: [] }],
  request: {
    query: z.object({
      brandId: BrandIdQuery.openapi({
        description: "For organization keys: omit to list across all the organization's brands, or pass to narrow.",
      }),
      type: ReportTypeSchema.optional().openapi({ description: 'Filters by ownership.' }),
      limit: pageLimitQuery(REPORTS_PAGE).optional(),
      cursor: cursorQuery('brandId/type filters'),
    }),
  },
  responses: {
    ...okJson(ReportListSchema, 'One page of reports'),
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'FORBIDDEN_BRAND'),
  },
});

export const get = createRoute({
  method: 'get',
  path: '/v1/data/reports/{reportId}',
  operationId: 'getReport',
  tags: ['Reports'],
  summary: 'Get one report with its instructions and dashboard config',
  description:
    'One report visible to the brand, with its instructions and dashboard configuration; its sections are listed by ' +
    'GET /v1/data/reports/{reportId}/queries. An organization key names `brandId` for a report with no single owning brand.',
  security: [{ bearerAuth: [] }],
  request: { params: ReportIdParams, query: ReportBrandQuery },
  responses: {
    ...okJson(ReportDetailSchema, 'The report'),
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'FORBIDDEN_BRAND', 'REPORT_NOT_FOUND'),
  },
});

export const listQueries = createRoute({
  method: 'get',
  path: '/v1/data/reports/{reportId}/queries',
  operationId: 'listReportQueries',
  tags: ['Reports'],
  summary: "List a report's queries in section order",
  description: 'Each is runnable by `id` via POST /v1/data/query; parameterized ones (`parameterized: true`) also accept a `period`.',
  security: [{ bearerAuth: [] }],
  request: { params: ReportIdParams, query: ReportBrandQuery },
  responses: {
    ...okJson(QueryListSchema, 'The report sections, by ordinal'),
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'FORBIDDEN_BRAND', 'REPORT_NOT_FOUND'),
  },
});

const listHandler: AppRouteHandler<typeof list> = async (c) => c.json(await listReports(opContext('rest'), c.req.valid('query')), 200);

const getHandler: AppRouteHandler<typeof get> = async (c) =>
  c.json(await getReport(opContext('rest'), { ...c.req.valid('param'), ...c.req.valid('query') }), 200);

const listQueriesHandler: AppRouteHandler<typeof listQueries> = async (c) =>
  c.json(await listReportQueries(opContext('rest'), { ...c.req.valid('param'), ...c.req.valid('query') }), 200);

export function registerReportRoutes(app: AppOpenAPI) {
  return app.openapi(list, listHandler).openapi(get, getHandler).openapi(listQueries, listQueriesHandler);
}
