import { createRoute, z } from '@hono/zod-openapi';
import { CommonHeaders, errorResponses } from '../../schemas/common';
import { RunQueryRequestSchema, RunQueryResponseSchema } from '../../schemas/run-query';

/** IETF draft RateLimit headers, documented on every response of a query run. */
export const RateLimitHeaders = CommonHeaders.extend({
  'RateLimit-Limit': z.string().openapi({ description: 'Query runs allowed per rolling 24 hours for this key.' }),
  'RateLimit-Remaining': z.string().openapi({ description: 'Query runs left in the current rolling 24-hour window.' }),
  'RateLimit-Reset': z.string().openapi({ description: 'Seconds until the window lets another run in.' }),
});

export const run = createRoute({
  method: 'post',
  path: '/v1/data/query',
  operationId: 'runQuery',
  tags: ['Queries'],
  summary: 'Run a read-only query against a brand',
  description:
    'Runs one read-only statement (raw `sql`) or a stored query (`queryId`, with an optional `period`) against a ' +
    "brand's dataset. Results above the row cap are cut and `truncated` is true: page with LIMIT / OFFSET in the SQL. " +
    'Rejections carry `details.stage`: `guard` (our rules) or `warehouse` (BigQuery).',
  security: [{ bearerAuth: [] }],
  request: {
    body: { required: true, content: { 'application/json': { schema: RunQueryRequestSchema } } },
  },
  responses: {
    200: {
      description: 'Query results (or, for a dry run, the byte estimate).',
      headers: RateLimitHeaders,
      content: { 'application/json': { schema: RunQueryResponseSchema } },
    },
    ...errorResponses(
      'VALIDATION',
      'INVALID_SQL',
      'QUERY_TOO_EXPENSIVE',
      'QUERY_FAILED',
      'UNAUTHORIZED',
      'FORBIDDEN_BRAND',
      'FORBIDDEN_TABLE',
      'QUERY_NOT_FOUND',
      'BRAND_NOT_PROVISIONED',
      'PAYLOAD_TOO_LARGE',
      'USAGE_LIMIT_EXCEEDED',
      'WAREHOUSE_ERROR',
      'WAREHOUSE_UNAVAILABLE',
      'USAGE_UNAVAILABLE',
      'WAREHOUSE_TIMEOUT',
    ),
  },
});

export type RunRoute = typeof run;
