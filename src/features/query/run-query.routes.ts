import { createRoute, z } from '@hono/zod-openapi';
import type { ErrorCode } from '../../errors';
import { CommonHeaders, ErrorSchema, errorResponses, JSON_BODY_ERRORS, jsonBody } from '../../schemas/common';
import { JOB_EXAMPLE_RUNNING, QueryJobSchema } from '../query-jobs/query-jobs.schemas';
import { bodyIssues, QueryPageRequestSchema, RunQueryRequestSchema } from './run-query.input';
import { RunQueryResponseSchema } from './run-query.schemas';
import { RateLimitHeaders, UsageLimitExceededHeaders } from '../../usage/rate-limit-headers';
import type { Context } from 'hono';
import type { AppEnv, AppOpenAPI, AppRouteHandler } from '../../app-env';
import { validationFailure } from '../../http/respond';
import { opContext } from '../../context';
import { readQueryPage, runQuery } from './run-query';
import { prefersAsync, startAsync } from '../query-jobs/rest-jobs';

const ServerTiming = z.string().openapi({
  description:
    'Where the time went inside the Worker, in ms (resolve, guard, dryrun, usage, warehouse, total; W3C Server-Timing). Workers ' +
    'clocks advance only at I/O, so phases without I/O read 0.',
  example: 'resolve;dur=0.0, guard;dur=1.0, usage;dur=1.0, warehouse;dur=41.0, total;dur=43.0',
});

/** The 200 of a run or a page: a RunQueryResponse with the RateLimit-* headers (and Server-Timing). */
function resultResponse(description: string) {
  return {
    description,
    headers: RateLimitHeaders.extend({ 'Server-Timing': ServerTiming }),
    content: { 'application/json': { schema: RunQueryResponseSchema } },
  };
}

/** The 429 of a run or a page (the rolling run budget, or the checks / pages meter). */
function limitResponse(description: string) {
  return { description, headers: UsageLimitExceededHeaders, content: { 'application/json': { schema: ErrorSchema } } };
}

/**
 * The two query operations: a JSON POST answering a RunQueryResponse (200) or the 429 of its meter, that reaches the
 * warehouse (and the usage store) and so can fail with their errors. `errors` are the operation's own codes.
 */
function queryRoute<P extends string, B extends z.ZodType, M extends object = object>(r: {
  path: P;
  operationId: string;
  summary: string;
  description: string;
  body: B;
  ok: string;
  limited: string;
  errors: ErrorCode[];
  /** Extra request headers and responses (the run's `Prefer: respond-async` and its 202). */
  headers?: z.ZodObject;
  more?: M;
}) {
  return createRoute({
    method: 'post',
    path: r.path,
    operationId: r.operationId,
    tags: ['Queries'],
    summary: r.summary,
    description: r.description,
    security: [{ bearerAuth: [] }],
    request: { body: jsonBody(r.body), ...(r.headers ? { headers: r.headers } : {}) },
    responses: {
      200: resultResponse(r.ok),
      ...(r.more as M),
      ...errorResponses(
        'VALIDATION',
        ...r.errors,
        'UNAUTHORIZED',
        ...JSON_BODY_ERRORS,
        'WAREHOUSE_ERROR',
        'WAREHOUSE_UNAVAILABLE',
        'USAGE_UNAVAILABLE',
        'WAREHOUSE_TIMEOUT',
      ),
      429: limitResponse(r.limited),
    },
  });
}

export const run = queryRoute({
  path: '/v1/data/query',
  operationId: 'runQuery',
  summary: 'Run a read-only query against a brand',
  description:
    'Runs one read-only statement (raw `sql`) or a stored query (`queryId`, with an optional `period`) against a ' +
    "brand's dataset. Results above the row cap are cut: `truncated` is true, `totalRows` is the whole result's size, and " +
    '`nextCursor` reads the next page with POST /v1/data/query/page (no new run, nothing billed); LIMIT / OFFSET in the SQL also works. ' +
    'Rejections carry `details.stage`: `guard` (our rules) or `warehouse` (BigQuery).',
  body: RunQueryRequestSchema,
  ok: 'Query results (or, for a dry run, the byte estimate).',
  headers: z.object({
    prefer: z
      .string()
      .optional()
      .openapi({
        description:
          '`respond-async` (RFC 7240) starts the query as an asynchronous job: 202 with `Location` at once, no deadline but the ' +
          "key's longest job duration. Without it the run keeps its `QUERY_TIMEOUT_MS` deadline and 504.",
        example: 'respond-async',
      }),
  }),
  more: {
    202: {
      description:
        'Accepted (`Prefer: respond-async`): the query runs as a job. Poll `Location` (GET /v1/data/query/jobs/{jobId}) for ' +
        'status, progress and the result; DELETE it to cancel. `Preference-Applied: respond-async`.',
      headers: CommonHeaders.extend({
        Location: z
          .string()
          .openapi({ description: 'The job: GET to poll, DELETE to cancel.', example: '/v1/data/query/jobs/qj_4f1c2e9a0b7d3c5e6f70' }),
        'Preference-Applied': z.string().openapi({ example: 'respond-async' }),
        'Retry-After': z.string().optional().openapi({ description: 'Seconds before the first poll.', example: '2' }),
      }),
      content: {
        'application/json': {
          schema: QueryJobSchema,
          example: { ...JOB_EXAMPLE_RUNNING, elapsedMs: 12, pollAfterMs: 2000 },
        },
      },
    },
  },
  errors: [
    'INVALID_SQL',
    'QUERY_TOO_EXPENSIVE',
    'QUERY_FAILED',
    'FORBIDDEN_BRAND',
    'FORBIDDEN_TABLE',
    'QUERY_NOT_FOUND',
    'BRAND_NOT_PROVISIONED',
  ],
  limited:
    'Daily usage limit reached, or (dry runs and refused queries) the checks rate (`USAGE_LIMIT_EXCEEDED`, `details.limit` = `runs`, ' +
    '`bytes` or `checks`): `Retry-After` says when the next one is let in.',
});

export const page = queryRoute({
  path: '/v1/data/query/page',
  operationId: 'readQueryPage',
  summary: 'Read the next page of a query result',
  description:
    "Returns the page of a capped result that `nextCursor` points at, read from the warehouse's stored copy of that run's result " +
    'with the same brand account: no new run, nothing billed, the daily run budget untouched. Page reads have their own rate ' +
    '(`DEFAULT_PAGE_READS_PER_MINUTE`, 120 a minute per key; 429 with `Retry-After` past it). A cursor works only for the key that ' +
    'ran the query and for 6 hours; otherwise 400 `VALIDATION` naming `cursor`.',
  body: QueryPageRequestSchema,
  ok: "The page: `rows` from the cursor's position, `totalRows`, and the next `nextCursor` (null on the last page).",
  errors: [],
  limited: 'Page-read rate reached (`USAGE_LIMIT_EXCEEDED`, `details.limit` = `pages`): `Retry-After` says when the next read is let in.',
});

const runHandler: AppRouteHandler<typeof run> = async (c) => {
  if (prefersAsync(c.req.header('prefer'))) {
    const started = await startAsync(opContext('rest'), c.req.valid('json'));
    if ('accepted' in started) return c.json(started.accepted, 202, started.headers);
    return c.json(started.done.result, 200, started.done.headers);
  }
  const { result, headers } = await runQuery(opContext('rest'), c.req.valid('json'));
  return c.json(result, 200, headers);
};

const pageHandler: AppRouteHandler<typeof page> = async (c) => {
  const { result, headers } = await readQueryPage(opContext('rest'), c.req.valid('json'));
  return c.json(result, 200, headers);
};

/**
 * What @hono/zod-validator hands a hook besides the outcome: the value it validated (for `json`, the parsed body),
 * on failure too. zod-openapi's Hook type leaves it out; without it the body's words could not be chosen.
 */
function validatedValue(result: object): unknown {
  if (!('data' in result)) throw new Error('the validator handed the hook no value (has @hono/zod-validator changed?)');
  return result.data;
}

/** The body is a union of two closed shapes: its failure worded by run_query's one rule (bodyIssues). */
function runFailure(result: { error: Parameters<typeof validationFailure>[0]; target: string }, c: Context<AppEnv>): Response {
  const { error, target } = result;
  return validationFailure(target === 'json' ? bodyIssues(validatedValue(result), error) : error, target, c);
}

export function registerRunQueryRoutes(app: AppOpenAPI) {
  return app.openapi(run, runHandler, (result, c) => (result.success ? undefined : runFailure(result, c))).openapi(page, pageHandler);
}
