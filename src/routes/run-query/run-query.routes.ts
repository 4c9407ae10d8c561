import { createRoute, z } from '@hono/zod-openapi';
import { ErrorSchema, errorResponses } from '../../schemas/common';
import { RunQueryRequestSchema, RunQueryResponseSchema } from '../../schemas/run-query';
import { RateLimitHeaders, UsageLimitExceededHeaders } from '../../usage/rate-limit-headers';

const ServerTiming = z.string().openapi({
  description: 'Where the time went inside the Worker, in ms (resolve, guard, dryrun, usage, warehouse, total; W3C Server-Timing). Workers clocks advance only at I/O, so phases without I/O read 0.',
  example: 'resolve;dur=0.0, guard;dur=1.0, usage;dur=1.0, warehouse;dur=41.0, total;dur=43.0',
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
      headers: RateLimitHeaders.extend({ 'Server-Timing': ServerTiming }),
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
      'UNSUPPORTED_MEDIA_TYPE',
      'WAREHOUSE_ERROR',
      'WAREHOUSE_UNAVAILABLE',
      'USAGE_UNAVAILABLE',
      'WAREHOUSE_TIMEOUT',
    ),
    429: {
      description: 'Daily usage limit reached (`USAGE_LIMIT_EXCEEDED`): `Retry-After` says when the rolling window lets the next run in.',
      headers: UsageLimitExceededHeaders,
      content: { 'application/json': { schema: ErrorSchema } },
    },
  },
});

export type RunRoute = typeof run;
