import { createRoute, z } from '@hono/zod-openapi';
import { CommonHeaders, errorResponses } from '../../schemas/common';
import { JOB_EXAMPLE_RUNNING, JobIdParamsSchema, QueryJobSchema } from './query-jobs.schemas';
import type { AppOpenAPI, AppRouteHandler } from '../../app-env';
import { opContext } from '../../context';
import { cancelLongJob, jobStatusOf } from './long-run';
import { restJob } from './rest-jobs';

const TAGS = ['Queries'];

/** Headers of a job answer: when to poll again, while it runs. */
export const JobHeaders = CommonHeaders.extend({
  'Retry-After': z.string().optional().openapi({ description: 'While the job runs: seconds before the next poll.', example: '2' }),
});

export const get = createRoute({
  method: 'get',
  path: '/v1/data/query/jobs/{jobId}',
  operationId: 'getQueryJob',
  tags: TAGS,
  summary: 'Poll an asynchronous query',
  description:
    'Status and progress of a query started with `Prefer: respond-async` (its `Location`). While it runs: `status` `running`, ' +
    '`elapsedMs`, `bytesProcessed` so far and `pollAfterMs` (also `Retry-After`). Once `done`: `result` is the first page, as ' +
    'a synchronous run answers it; `result.nextCursor` reads the rest with POST /v1/data/query/page. Reading the result is a ' +
    'page read (the `pages` meter), never a new run. Results stay readable 6 hours, then 410 `RESULT_GONE`. Only the key ' +
    '(or connection) that started the job sees it: any other gets 404 `JOB_NOT_FOUND`.',
  security: [{ bearerAuth: [] }],
  request: { params: JobIdParamsSchema },
  responses: {
    200: {
      description: 'The job.',
      headers: JobHeaders,
      content: {
        'application/json': {
          schema: QueryJobSchema,
          examples: {
            running: { value: JOB_EXAMPLE_RUNNING },
            done: {
              value: {
                ...JOB_EXAMPLE_RUNNING,
                status: 'done',
                endedAt: '2026-11-27T10:03:12.000Z',
                elapsedMs: 192000,
                bytesProcessed: 53687091200,
                bytesBilled: 53687091200,
                pollAfterMs: null,
                result: {
                  brandId: 'acme',
                  rows: [{ day: '2026-11-01', orders: 1520 }],
                  rowCount: 1,
                  truncated: true,
                  totalRows: 365,
                  nextCursor: 'eyJ2IjoxLCJpYXQiOjE3...',
                  stats: { dryRun: false, totalBytesBilled: 53687091200, totalBytesProcessed: 53687091200 },
                },
              },
            },
          },
        },
      },
    },
    ...errorResponses(
      'VALIDATION',
      'UNAUTHORIZED',
      'JOB_NOT_FOUND',
      'RESULT_GONE',
      'USAGE_LIMIT_EXCEEDED',
      'WAREHOUSE_ERROR',
      'WAREHOUSE_UNAVAILABLE',
    ),
  },
});

export const cancel = createRoute({
  method: 'delete',
  path: '/v1/data/query/jobs/{jobId}',
  operationId: 'cancelQueryJob',
  tags: TAGS,
  summary: 'Cancel an asynchronous query',
  description:
    'Asks BigQuery to cancel the job. BigQuery stops it shortly after (`status` `cancelling`, then `cancelled`); what it billed ' +
    'until then is counted against the key once known. A job that already ended is answered as it is. Owner only (404 otherwise).',
  security: [{ bearerAuth: [] }],
  request: { params: JobIdParamsSchema },
  responses: {
    202: {
      description: 'The cancel was sent; the job as it now stands.',
      headers: JobHeaders,
      content: { 'application/json': { schema: QueryJobSchema, example: { ...JOB_EXAMPLE_RUNNING, status: 'cancelling' } } },
    },
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'JOB_NOT_FOUND', 'WAREHOUSE_ERROR', 'WAREHOUSE_UNAVAILABLE'),
  },
});

const getHandler: AppRouteHandler<typeof get> = async (c) => {
  const ctx = opContext('rest');
  const { body, headers } = await restJob(ctx, await jobStatusOf(ctx, c.req.valid('param').jobId));
  return c.json(body, 200, headers);
};

const cancelHandler: AppRouteHandler<typeof cancel> = async (c) => {
  const ctx = opContext('rest');
  const { body, headers } = await restJob(ctx, await cancelLongJob(ctx, c.req.valid('param').jobId));
  return c.json(body, 202, headers);
};

export function registerQueryJobRoutes(app: AppOpenAPI) {
  return app.openapi(get, getHandler).openapi(cancel, cancelHandler);
}
