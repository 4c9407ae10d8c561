import { z } from '@hono/zod-openapi';
import { ERROR_STATUS, isErrorCode, type ErrorCode } from '../../errors';
import { RunQueryResponseSchema } from '../query/run-query.schemas';
import { JOB_STATUSES, pollAfterMs, type JobRow } from './job-store';

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

export const JobIdParamsSchema = z.object({
  jobId: z.string().openapi({ description: 'The job id from `Location` (or the 202 body).', example: 'qj_4f1c2e9a0b7d3c5e6f70' }),
});

/** A long query as its owner sees it: status and progress; the result's first page once done; the error once it failed. */
export const QueryJobSchema = z
  .object({
    jobId: z.string().openapi({ example: 'qj_4f1c2e9a0b7d3c5e6f70' }),
    status: z.enum(JOB_STATUSES).openapi({
      description:
        '`running`; `cancelling` (a cancel was sent, BigQuery has not stopped it yet); then one of `done` (`result` is set), ' +
        "`failed`, `cancelled` or `expired` (ran past the key's longest duration) with `error` set.",
      example: 'running',
    }),
    brandId: z.string(),
    createdAt: z.string().openapi({ description: 'ISO 8601.', example: '2026-11-27T10:00:00.000Z' }),
    endedAt: z.string().nullable().openapi({ description: 'ISO 8601; null while it runs.' }),
    elapsedMs: z.number().int().openapi({ description: 'Time since the start (to the end, once ended).', example: 41250 }),
    bytesProcessed: z
      .number()
      .nullable()
      .openapi({ description: 'Bytes BigQuery reports processed so far (null until it reports any).', example: 1073741824 }),
    bytesBilled: z.number().nullable().openapi({ description: 'What BigQuery billed, once the job ended.' }),
    pollAfterMs: z.number().int().nullable().openapi({
      description: 'While it runs: how long to wait before the next poll (also `Retry-After`). Null once ended.',
      example: 2000,
    }),
    result: RunQueryResponseSchema.optional().openapi({
      description:
        'Once `done`: the first page, as a synchronous run answers it (`nextCursor` reads the rest with POST /v1/data/query/page).',
    }),
    error: z
      .object({ code: z.enum(ERROR_CODES), message: z.string() })
      .optional()
      .openapi({ description: 'Once `failed`, `cancelled` or `expired`: the error a synchronous run would have answered.' }),
  })
  .openapi('QueryJob');
export type QueryJob = z.infer<typeof QueryJobSchema>;

/** A running job, as the OpenAPI examples show it. */
export const JOB_EXAMPLE_RUNNING = {
  jobId: 'qj_4f1c2e9a0b7d3c5e6f70',
  status: 'running',
  brandId: 'acme',
  createdAt: '2026-11-27T10:00:00.000Z',
  endedAt: null,
  elapsedMs: 41250,
  bytesProcessed: null,
  bytesBilled: null,
  pollAfterMs: 5000,
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A job row as its owner sees it (without `result`, which the caller adds once done). */
export function jobView(row: JobRow, now: number, pollAfter: number | null): QueryJob {
  const code = isErrorCode(row.error_code) ? row.error_code : null;
  return {
    jobId: row.id,
    status: row.status,
    brandId: row.brand_id,
    createdAt: new Date(row.created_at).toISOString(),
    endedAt: iso(row.ended_at),
    elapsedMs: Math.max(0, (row.ended_at ?? now) - row.created_at),
    bytesProcessed: row.bytes_processed,
    bytesBilled: row.bytes_billed,
    pollAfterMs: pollAfter,
    ...(code ? { error: { code, message: row.error_message ?? '' } } : {}),
  };
}

/** A live job as a pending answer (MCP): how far it got and when to ask again. */
export function pendingView(row: JobRow, now: number) {
  return {
    status: row.status === 'cancelling' ? ('cancelling' as const) : ('running' as const),
    jobId: row.id,
    brandId: row.brand_id,
    elapsedMs: Math.max(0, now - row.created_at),
    bytesProcessed: row.bytes_processed,
    pollAfterMs: pollAfterMs(row, now),
  };
}
