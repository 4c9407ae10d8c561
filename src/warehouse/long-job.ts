import { ApiError } from '../errors';
import type { CallOptions } from './bigquery-client';
import { mapUpstreamError } from './errors';
import { sanitizeLabels } from './labels';
import { cancel, type Jobs } from './query-job';
import { parseQueryResponse } from './transport';
import { JobSchema } from './wire';

/**
 * The calls of a long query: a job submitted under a client-chosen id and left running, asked about later (by
 * another request, another isolate, an alarm), and cancelled. Unlike `runQuery` nothing here waits for the end:
 * each call is one bounded exchange. See docs/run-query.md, "Long queries".
 */

/** Where a job is: BigQuery's job id and location (what every later call names). */
export interface JobRef {
  jobId: string;
  location: string;
}

export interface SubmitJobOptions extends CallOptions {
  /** The client-chosen job id, recorded before the job is sent so a lost answer cannot lose the job. */
  jobId: string;
  maxBytesBilled: number;
  /** BigQuery's own limit of the job's run time (`configuration.jobTimeoutMs`): the key's longest duration. */
  jobTimeoutMs: number;
  /** Deadline of the submission itself, retries included. */
  timeoutMs: number;
}

export interface JobCallOptions extends CallOptions, JobRef {
  /** Deadline of this one call, retries included. */
  timeoutMs: number;
}

/** What `jobs.get` says of a job now. */
export interface JobStatus {
  state: 'PENDING' | 'RUNNING' | 'DONE';
  /** Bytes BigQuery reports processed (set once it knows; on a running job only when BigQuery reports progress). */
  bytesProcessed: number | null;
  /** Bytes billed, known once the job is DONE. */
  bytesBilled: number | null;
  /** How a DONE job failed, as the error a synchronous run would have given; null when it succeeded or runs. */
  error: ApiError | null;
  /** The failure's BigQuery reason (`stopped` for a cancelled job, `timeout` past `jobTimeoutMs`). */
  reason: string | null;
}

/**
 * `jobs.insert` of a query job under `opts.jobId`. Idempotent: a resend after a lost answer meets 409 duplicate
 * (our own job), never a second job.
 */
export async function submitJob(q: Jobs, sql: string, opts: SubmitJobOptions): Promise<JobRef> {
  const call = q.newCall(opts, 'jobs.insert(long)', opts.timeoutMs, { maxBytesBilled: opts.maxBytesBilled });
  const inserted = JobSchema.safeParse(
    await q.send(
      {
        method: 'POST',
        path: '/jobs',
        body: {
          jobReference: { projectId: q.env.BIGQUERY_PROJECT, jobId: opts.jobId, location: q.location },
          configuration: {
            labels: sanitizeLabels(opts.labels),
            jobTimeoutMs: String(opts.jobTimeoutMs),
            query: { query: sql, useLegacySql: false, maximumBytesBilled: String(opts.maxBytesBilled) },
          },
        },
      },
      call,
      { accept: (f, attempt) => attempt > 1 && f.status === 409 && f.reasons.includes('duplicate') },
    ),
  );
  const location = (inserted.success ? inserted.data.jobReference?.location : undefined) ?? q.location ?? '';
  return { jobId: opts.jobId, location };
}

/**
 * Waits up to `waitMs` (BigQuery's long poll, `getQueryResults` with `maxResults: 0`) for the job to finish.
 * True when it finished with a result; a job that failed throws the error a synchronous run would have thrown.
 */
export async function awaitJob(q: Jobs, opts: JobCallOptions, waitMs: number): Promise<{ complete: boolean; totalRows: number }> {
  const call = q.newCall(opts, 'jobs.getQueryResults(long)', opts.timeoutMs + waitMs);
  const json = await q.send(
    {
      method: 'GET',
      path: `/queries/${encodeURIComponent(opts.jobId)}`,
      query: { location: opts.location || undefined, maxResults: 0, timeoutMs: Math.max(0, Math.round(waitMs)) },
    },
    call,
  );
  const answer = parseQueryResponse(json, 'jobs.getQueryResults(long)');
  return { complete: answer.jobComplete, totalRows: answer.totalRows ?? 0 };
}

/** `jobs.get`: the job's state, bytes and, once DONE, how it ended. A job BigQuery does not know is null. */
export async function jobStatus(q: Jobs, opts: JobCallOptions): Promise<JobStatus | null> {
  const call = q.newCall(opts, 'jobs.get(long)', opts.timeoutMs);
  let json: unknown;
  try {
    json = await q.send(
      { method: 'GET', path: `/jobs/${encodeURIComponent(opts.jobId)}`, query: { location: opts.location || undefined } },
      call,
    );
  } catch (err) {
    if (call.tally.lastFailure?.status === 404) return null;
    throw err;
  }
  const job = JobSchema.parse(json);
  const state = job.status?.state === 'DONE' ? 'DONE' : job.status?.state === 'PENDING' ? 'PENDING' : 'RUNNING';
  const stats = job.statistics;
  const failure = job.status?.errorResult;
  const error = failure
    ? mapUpstreamError(400, JSON.stringify({ error: { code: 400, message: failure.message, errors: [failure] } }), {
        maxBytesBilled: undefined,
      }).error
    : null;
  return {
    state,
    bytesProcessed: stats?.query?.totalBytesProcessed ?? stats?.totalBytesProcessed ?? null,
    bytesBilled: state === 'DONE' ? (stats?.query?.totalBytesBilled ?? 0) : null,
    error,
    reason: failure?.reason ?? null,
  };
}

/** `jobs.cancel`, best effort: it returns before the job stops; `jobStatus` later says how it ended and what it billed. */
export async function cancelJob(q: Jobs, opts: JobCallOptions): Promise<void> {
  await cancel(q, opts.jobId, opts.location || undefined, q.newCall(opts, 'jobs.cancel(long)', opts.timeoutMs));
}
