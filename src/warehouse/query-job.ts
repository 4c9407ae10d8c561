import { configOf, type Env } from '../env';
import { ApiError, describeError } from '../errors';
import type {
  CallOptions,
  JobOptions,
  JobRef,
  JobState,
  PageOptions,
  PageResult,
  QueryOptions,
  QueryResult,
  WarehouseClientDeps,
} from './types';
import { decodeRows } from './decode';
import { deadlineExceeded, malformedAnswer } from './errors';
import { sanitizeLabels } from './labels';
import { backoffDelay, DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry';
import { parseQueryResponse, type Call, type Transport } from './transport';
import { JobSchema, type FieldSchema, type QueryResponse } from './wire';

/**
 * The client's query jobs: submitting a query (the fast path, or a job with a client-chosen id), waiting for it,
 * reading its pages within the row cap and byte budget, reading a cursor's page later, and settling a job it
 * gave up on (cancel, then jobs.get until DONE for what it billed). See docs/warehouse-client.md.
 */

/** Codes of errors about the query itself: BigQuery refused or failed it, and bills nothing for it. */
const QUERY_ERRORS = new Set(['QUERY_FAILED', 'QUERY_TOO_EXPENSIVE', 'FORBIDDEN_TABLE']);

/** Asks for TIMESTAMP as integer microseconds (lossless), as both official clients do. */
const INT64_TIMESTAMPS = { 'formatOptions.useInt64Timestamp': 'true' } as const;

const decodeOpts = { int64Timestamps: true };

/** Job ids this client chooses (`jobs.insert`); BigQuery's own ids never start so. */
const CLIENT_JOB_PREFIX = 'wqa_';

/**
 * How long a `jobs.get` 404 for a job whose id we chose is retried before it counts as "never created": BigQuery
 * can answer 404 just after a 409 (python-bigquery retry.py, `_should_retry_get_job_conflict`, issue #2134).
 */
const NOT_FOUND_GRACE_MS = 5_000;

/** Where one query stands, for the failure path: what was sent, which job, what it said it billed. */
interface Execution {
  /** Nothing answered yet (submission outcome unknown), or a known answer / job. */
  phase: 'submit' | 'job';
  jobId: string | null;
  jobLocation: string | undefined;
  /** The job id is ours (`jobs.insert`), so it exists only if BigQuery received the insert. */
  clientId?: boolean;
  /** What a job-less answer said it billed, so an error after it (an unreadable cell) still counts the bytes. */
  knownBilled: number | null;
  /** Tables the query reads, for BigQuery's per-table minimum when a job does not say what it billed. */
  tables: number;
}

/** A query's answer so far: the latest jobs.query / getQueryResults response and its size in bytes. */
interface Answer {
  first: QueryResponse;
  firstBytes: number;
}

/** What every function of this module reads: the client's HTTP layer, configuration and settings. */
export interface Jobs {
  env: Env;
  deps: WarehouseClientDeps;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  location: string | undefined;
  exchange: Transport['exchange'];
  send: Transport['send'];
  sendMeasured: Transport['sendMeasured'];
  newCall: Transport['newCall'];
  maxPollWaitMs: number;
  cancelTimeoutMs: number;
  settleTimeoutMs: number;
  jobTimeoutMarginMs: number;
  maxPolls: number;
  pollPolicy: RetryPolicy;
}

/** The settings of `deps` with their defaults, over the client's transport. */
export function queryJobs(env: Env, t: Transport, deps: WarehouseClientDeps): Jobs {
  const pollBackoff = deps.pollBackoff ?? { baseMs: 250, maxMs: 2_000 };
  return {
    env,
    deps,
    ...t,
    maxPollWaitMs: deps.maxPollWaitMs ?? 10_000,
    cancelTimeoutMs: deps.cancelTimeoutMs ?? 1_000,
    settleTimeoutMs: deps.settleTimeoutMs ?? 20_000,
    jobTimeoutMarginMs: deps.jobTimeoutMarginMs ?? 5_000,
    maxPolls: deps.maxPolls ?? 40,
    pollPolicy: { ...DEFAULT_RETRY_POLICY, baseDelayMs: pollBackoff.baseMs, maxDelayMs: pollBackoff.maxMs },
  };
}

/** Best effort: a job we stop waiting for should stop billing. Failures are logged, never thrown. */
async function cancel(q: Jobs, jobId: string, jobLocation: string | undefined, call: Call): Promise<void> {
  const cancelCall: Call = { ...call, op: 'jobs.cancel', deadline: q.now() + q.cancelTimeoutMs };
  try {
    const r = await q.exchange(
      { method: 'POST', path: `/jobs/${encodeURIComponent(jobId)}/cancel`, query: { location: jobLocation } },
      cancelCall,
      q.cancelTimeoutMs,
    );
    if (r.ok) call.log.info('warehouse job cancel requested', { jobId });
    else call.log.warn('warehouse job cancel failed', { jobId, upstream: r.failure.error.internal });
  } catch (err) {
    const timedOut = err instanceof ApiError && err.code === 'WAREHOUSE_TIMEOUT';
    call.log.warn('warehouse job cancel failed', {
      jobId,
      error: timedOut ? `no answer within ${q.cancelTimeoutMs} ms` : describeError(err),
    });
  }
}

/**
 * `getQueryResults` doesn't report bytes billed; the job does (`jobs.get`). Null when the lookup fails: the rows are
 * already in hand, so a failed lookup costs the usage count's accuracy, never the answer (the caller then bills
 * the processed bytes at BigQuery's minimums).
 */
async function jobBytes(
  q: Jobs,
  jobId: string,
  jobLocation: string | undefined,
  call: Call,
): Promise<{ billed: number | undefined; processed: number | undefined } | null> {
  try {
    const job = JobSchema.safeParse(
      await q.send(
        { method: 'GET', path: `/jobs/${encodeURIComponent(jobId)}`, query: { location: jobLocation } },
        { ...call, op: 'jobs.get' },
      ),
    );
    const stats = job.success ? job.data.statistics : undefined;
    const billed = stats?.query?.totalBytesBilled;
    if (billed === undefined) call.log.warn('jobs.get had no totalBytesBilled; billing bytes processed at the minimums', { jobId });
    return { billed, processed: stats?.query?.totalBytesProcessed ?? stats?.totalBytesProcessed };
  } catch (err) {
    call.log.warn('jobs.get failed; billing bytes processed at the minimums', {
      jobId,
      error: describeError(err),
      upstream: err instanceof ApiError ? err.internal : undefined,
    });
    return null;
  }
}

/**
 * A job we stopped waiting for: cancel it, then poll `jobs.get` until BigQuery reports it DONE and read what it
 * billed. `jobs.cancel` returns at once while the job may still run ("the client will need to poll for the job
 * status ... Cancelled jobs may still incur costs", jobs.cancel in the BigQuery v2 reference), so the bytes are
 * only known later. Never rejects. A DONE job without `totalBytesBilled` bills its processed bytes at BigQuery's
 * minimums; a 404 for an id we chose is retried for NOT_FOUND_GRACE_MS before it counts as never created (0); a job
 * that stays unknown or unfinished is counted at `fallback`.
 */
async function settleAbandoned(
  q: Jobs,
  jobId: string,
  jobLocation: string | undefined,
  call: Call,
  fallback: number,
  tables: number,
): Promise<number> {
  await cancel(q, jobId, jobLocation, call);
  const until = q.now() + q.settleTimeoutMs;
  const ours = jobId.startsWith(CLIENT_JOB_PREFIX);
  let notFoundSince: number | null = null;
  for (let attempt = 1; ; attempt++) {
    const getCall: Call = {
      ...call,
      op: 'jobs.get(settle)',
      deadline: Math.min(until, q.now() + q.cancelTimeoutMs * 2),
      timeoutMs: q.cancelTimeoutMs * 2,
    };
    try {
      const job = JobSchema.safeParse(
        await q.send({ method: 'GET', path: `/jobs/${encodeURIComponent(jobId)}`, query: { location: jobLocation } }, getCall),
      );
      notFoundSince = null;
      if (job.success && job.data.status?.state === 'DONE') {
        const stats = job.data.statistics;
        const processed = stats?.query?.totalBytesProcessed ?? stats?.totalBytesProcessed;
        const billed = stats?.query?.totalBytesBilled ?? (processed === undefined ? fallback : billedFromProcessed(processed, tables));
        call.log.info('abandoned warehouse job settled', { jobId, bytesBilled: billed, polls: attempt });
        return billed;
      }
    } catch (err) {
      if (getCall.tally.lastFailure?.status === 404) {
        notFoundSince ??= q.now();
        if (ours && q.now() - notFoundSince >= Math.min(NOT_FOUND_GRACE_MS, q.settleTimeoutMs / 2)) {
          call.log.info('abandoned warehouse job unknown to the warehouse; it was never created, nothing billed', { jobId });
          return 0;
        }
      } else {
        call.log.warn('jobs.get of an abandoned job failed', { jobId, error: describeError(err) });
      }
    }
    const pause = backoffDelay(q.pollPolicy, attempt, q.random);
    if (q.now() + pause >= until) break;
    await q.sleep(pause);
  }
  call.log.warn('could not learn what an abandoned job billed; counting the estimate', { jobId, bytes: fallback });
  return fallback;
}

/** Reports `late` to the caller and keeps it running past the answer (or awaits it without waitUntil). */
async function reportLate(q: Jobs, late: Promise<number>, opts: JobOptions): Promise<void> {
  opts.onLateBilling?.(late);
  if (q.deps.waitUntil) q.deps.waitUntil(late);
  else await late;
}

function jobTimeoutMs(q: Jobs, opts: JobOptions): string {
  return String(opts.jobTimeoutMs ?? opts.timeoutMs + q.jobTimeoutMarginMs);
}

const MIB = 1024 * 1024;
/** On-demand pricing: "rounded up to the nearest MB, with a minimum 10 MB data processed per table referenced". */
const MIN_BILLED_PER_TABLE = 10 * MIB;

/**
 * What a job that read `processed` bytes bills when BigQuery does not say (no `totalBytesBilled`): rounded up to a
 * MiB, at least 10 MiB per table read (https://cloud.google.com/bigquery/pricing#on_demand_pricing). Never less than
 * BigQuery would bill, so a missing field cannot under-count a meter.
 */
export function billedFromProcessed(processed: number, tables = 1): number {
  if (processed <= 0) return 0;
  return Math.max(MIN_BILLED_PER_TABLE * Math.max(1, tables), Math.ceil(processed / MIB) * MIB);
}

/** Rows asked for in one answer at most, so a page stays far below BigQuery's 10 MB page cap (review N5). */
export const FIRST_PAGE_ROWS = 2_000;

/**
 * Thrown by `query` with `leaveRunning` when its deadline passed while the job still ran: the job was not cancelled,
 * and its reference is here for the caller to keep watching (a long query's record). Not an error of the query.
 */
export class JobStillRunning extends Error {
  constructor(readonly job: JobRef) {
    super(`job ${job.jobId} still running at the deadline; left running`);
  }
}

/** A fresh run: nothing submitted yet. */
function newExecution(q: Jobs, opts: JobOptions): Execution {
  return { phase: 'submit', jobId: null, jobLocation: q.location, knownBilled: null, tables: opts.tables ?? 1 };
}

/**
 * `query`: one execution per answer, never a second one for the same SQL. The fast path (`jobs.query`) answers a
 * short query in one round trip: job-less (JOB_CREATION_OPTIONAL) when nothing will cut the answer, or with a job
 * BigQuery keeps (JOB_CREATION_REQUIRED, `keepJob`) when the caller may cut it and a cursor must continue from the
 * same result. `requireJob` submits with a client-chosen id instead (`submitJob`). A fast-path submission whose
 * outcome is unknown (5xx, dropped connection) is not resent (BigQuery may ignore `requestId` for a read-only query,
 * so it could run twice): it falls back to one client-id job, whose own resends are safe. See
 * docs/warehouse-client.md, "Which path, when".
 */
export async function executeQuery(q: Jobs, sql: string, opts: QueryOptions): Promise<QueryResult> {
  const call = q.newCall(opts, opts.requireJob ? 'jobs.insert' : 'jobs.query', opts.timeoutMs, { maxBytesBilled: opts.maxBytesBilled });
  let run = newExecution(q, opts);
  /** The fast path's outcome was unknown and a client-id job was submitted instead. */
  let fellBack = false;
  try {
    let answer: Answer;
    if (opts.requireJob) {
      await insertJob(q, sql, opts, call, run);
      answer = { first: { jobComplete: false }, firstBytes: 0 };
    } else {
      try {
        answer = await submitFastPath(q, sql, opts, call, run);
      } catch (err) {
        if (!submissionUnknown(err, call, run) || call.deadline - q.now() <= 0) throw err;
        // The fast path's outcome is unknown and it has no id to find it by: one client-id job instead, within
        // the same deadline. From here every resend is safe (409 duplicate is our own job).
        call.log.warn('jobs.query outcome unknown; submitting once as a client-id job', { code: (err as ApiError).code });
        run = newExecution(q, opts);
        fellBack = true;
        await insertJob(q, sql, opts, { ...call, op: 'jobs.insert(fallback)' }, run);
        answer = { first: { jobComplete: false }, firstBytes: 0 };
      }
    }
    return await finishExecution(q, answer, opts, call, run);
  } catch (err) {
    // Past the wait with the job known and running: left to the caller, who records it (never a fallback job,
    // whose possibly-run first attempt only this call counts).
    if (opts.leaveRunning && !fellBack && run.jobId !== null && err instanceof ApiError && err.code === 'WAREHOUSE_TIMEOUT') {
      throw new JobStillRunning({ jobId: run.jobId, location: run.jobLocation ?? null });
    }
    // The fallback failed too: the fast-path attempt that may have run is counted at the estimate, beside what
    // the fallback job billed (settled below).
    if (fellBack && err instanceof ApiError && !QUERY_ERRORS.has(err.code)) {
      await reportLate(q, Promise.resolve(opts.billedIfUnknown ?? 0), opts);
    }
    throw await failed(q, err, opts, call, run);
  }
}

/** A failure of the submission whose outcome is unknown: no answer, a 5xx, a dropped connection. Not a refusal. */
function submissionUnknown(err: unknown, call: Call, run: Execution): boolean {
  if (!(err instanceof ApiError) || QUERY_ERRORS.has(err.code) || run.phase !== 'submit') return false;
  const f = call.tally.lastFailure;
  if (err.code === 'WAREHOUSE_TIMEOUT') return true;
  return f !== null && !f.refused && !(f.status >= 400 && f.status < 500);
}

/** A submitted query to its answer: waited for, its rows read within the caps, and what it billed. */
async function finishExecution(q: Jobs, submitted: Answer, opts: QueryOptions, call: Call, run: Execution): Promise<QueryResult> {
  const { first, firstBytes } = await awaitCompletion(q, submitted, opts, call, run);
  const { jobId, jobLocation } = run;
  const { rows, schema } = await readRows(q, first, firstBytes, opts, call, run);
  const totalRows = Math.max(first.totalRows ?? 0, rows.length);
  let totalBytesProcessed = first.totalBytesProcessed ?? 0;
  let totalBytesBilled = first.totalBytesBilled;
  if (totalBytesBilled === undefined && first.cacheHit === true) totalBytesBilled = 0;
  if (totalBytesBilled === undefined && jobId && !opts.bytesAskedElsewhere) {
    const known = await jobBytes(q, jobId, jobLocation, call);
    totalBytesProcessed = Math.max(totalBytesProcessed, known?.processed ?? 0);
    totalBytesBilled = known?.billed;
  }
  return {
    rows,
    schema,
    truncated: rows.length < totalRows,
    totalRows,
    totalBytesProcessed,
    totalBytesBilled: totalBytesBilled ?? billedFromProcessed(totalBytesProcessed, run.tables),
    jobId,
    location: jobLocation ?? null,
    queryId: first.queryId ?? null,
    requests: call.tally.requests,
  };
}

/**
 * `submitJob`: a query job BigQuery keeps, submitted with a client-chosen id and returned as soon as BigQuery has
 * it (it may still run). Safe to resend; if even the resends leave the outcome unknown, the job (its id is ours)
 * is cancelled and settled through `onLateBilling`, and the error is thrown.
 */
export async function submitJob(q: Jobs, sql: string, opts: JobOptions): Promise<JobRef> {
  const call = q.newCall(opts, 'jobs.insert', opts.timeoutMs, { maxBytesBilled: opts.maxBytesBilled });
  const run = newExecution(q, opts);
  try {
    await insertJob(q, sql, opts, call, run);
  } catch (err) {
    throw await failed(q, err, opts, call, run);
  }
  return { jobId: run.jobId ?? '', location: run.jobLocation ?? null };
}

/**
 * `awaitJob`: a submitted job to its answer within `opts.timeoutMs`, as `query` gives it. Past the deadline the job
 * is cancelled and settled (`onLateBilling`), unless `leaveRunning`: then any failure (the 504 of the deadline, the
 * warehouse out of reach) leaves the job as it is, for its owner (a long query's record) to decide.
 */
export async function awaitJob(q: Jobs, job: JobRef, opts: QueryOptions): Promise<QueryResult> {
  const call = q.newCall(opts, 'jobs.getQueryResults', opts.timeoutMs, { maxBytesBilled: opts.maxBytesBilled });
  const run: Execution = { ...newExecution(q, opts), phase: 'job', jobId: job.jobId, jobLocation: job.location ?? q.location };
  try {
    return await finishExecution(q, { first: { jobComplete: false }, firstBytes: 0 }, opts, call, run);
  } catch (err) {
    if (opts.leaveRunning) throw err;
    throw await failed(q, err, opts, call, run);
  }
}

/** `jobStatus`: where a job stands (one `jobs.get`): its state, bytes so far, what it billed once DONE. */
export async function jobStatus(q: Jobs, job: JobRef, opts: CallOptions & { timeoutMs?: number }): Promise<JobState> {
  const call = q.newCall(opts, 'jobs.get', opts.timeoutMs ?? configOf(q.env).QUERY_TIMEOUT_MS, { readsStoredResult: true });
  const parsed = JobSchema.safeParse(
    await q.send({ method: 'GET', path: `/jobs/${encodeURIComponent(job.jobId)}`, query: { location: job.location ?? q.location } }, call),
  );
  if (!parsed.success) throw malformedAnswer('jobs.get: not a job', '');
  const { status, statistics } = parsed.data;
  const state = status?.state === 'DONE' ? 'DONE' : status?.state === 'PENDING' ? 'PENDING' : 'RUNNING';
  const processed = statistics?.query?.totalBytesProcessed ?? statistics?.totalBytesProcessed ?? 0;
  const billed = statistics?.query?.totalBytesBilled;
  return {
    state,
    totalBytesProcessed: processed,
    totalBytesBilled: state === 'DONE' ? (billed ?? billedFromProcessed(processed)) : null,
    error: status?.errorResult ? { reason: status.errorResult.reason ?? null, message: status.errorResult.message ?? null } : null,
  };
}

/** `cancelJob`: cancels a job and waits (bounded by settleTimeoutMs) until BigQuery reports what it billed. */
export async function cancelJob(q: Jobs, job: JobRef, opts: CallOptions & { billedIfUnknown?: number }): Promise<number> {
  const call = q.newCall(opts, 'jobs.cancel', q.settleTimeoutMs + q.cancelTimeoutMs);
  return settleAbandoned(q, job.jobId, job.location ?? q.location, call, opts.billedIfUnknown ?? 0, 1);
}

/**
 * Idempotent by a client-chosen job id (`jobs.insert`): a resend after a lost answer meets 409 duplicate (our own
 * job), never a second job, and the id is known even when no answer came, so the job can be cancelled and billed.
 */
async function insertJob(q: Jobs, sql: string, opts: JobOptions, call: Call, run: Execution): Promise<void> {
  const jobId = opts.jobId ?? `${CLIENT_JOB_PREFIX}${crypto.randomUUID().replaceAll('-', '')}`;
  run.jobId = jobId;
  run.clientId = true;
  const inserted = JobSchema.safeParse(
    await q.send(
      {
        method: 'POST',
        path: '/jobs',
        body: {
          jobReference: { projectId: q.env.BIGQUERY_PROJECT, jobId, location: q.location },
          configuration: {
            labels: sanitizeLabels(opts.labels),
            jobTimeoutMs: jobTimeoutMs(q, opts),
            query: { query: sql, useLegacySql: false, maximumBytesBilled: String(opts.maxBytesBilled) },
          },
        },
      },
      call,
      { accept: (f, attempt) => attempt > 1 && f.status === 409 && f.reasons[0] === 'duplicate' },
    ),
  );
  run.jobLocation = (inserted.success ? inserted.data.jobReference?.location : undefined) ?? q.location;
  run.phase = 'job';
}

/**
 * The fast path (jobs.query): a short query answers in this one request. BigQuery may ignore `requestId` for
 * read-only queries, so this request is resent only after a refusal (429, rateLimitExceeded): after any other
 * failure it may have run, and `executeQuery` falls back to a client-id job instead. `keepJob` asks BigQuery to keep a
 * job (JOB_CREATION_REQUIRED) so a cursor can continue a result the caller cuts. At most FIRST_PAGE_ROWS rows are
 * asked for: a larger result gets a job from BigQuery itself (LARGE_RESULTS) and is paged.
 */
async function submitFastPath(q: Jobs, sql: string, opts: QueryOptions, call: Call, run: Execution): Promise<Answer> {
  const sent = await q.sendMeasured(
    {
      method: 'POST',
      path: '/queries',
      body: {
        query: sql,
        useLegacySql: false,
        maximumBytesBilled: String(opts.maxBytesBilled),
        maxResults: Math.min(opts.rowCap, FIRST_PAGE_ROWS),
        timeoutMs: Math.max(0, call.deadline - q.now()),
        jobTimeoutMs: jobTimeoutMs(q, opts),
        jobCreationMode: opts.keepJob ? 'JOB_CREATION_REQUIRED' : 'JOB_CREATION_OPTIONAL',
        formatOptions: { useInt64Timestamp: true },
        location: q.location,
        labels: sanitizeLabels(opts.labels),
        requestId: crypto.randomUUID(),
      },
    },
    call,
    { retry: (f) => f.retryable && f.refused },
  );
  const first = parseQueryResponse(sent.json, 'jobs.query');
  run.knownBilled = first.totalBytesBilled ?? null;
  run.jobId = first.jobReference?.jobId ?? null;
  run.jobLocation = first.jobReference?.location ?? q.location;
  run.phase = 'job';
  return { first, firstBytes: sent.bytes };
}

/**
 * Long poll: BigQuery holds each getQueryResults up to `timeoutMs`. An answer that comes back incomplete at once
 * (a warehouse not honouring the wait) is followed by a jittered, growing pause, and the polls of one query are
 * capped, so a stuck job cannot turn into a flood of requests.
 */
async function awaitCompletion(q: Jobs, answer: Answer, opts: QueryOptions, call: Call, run: Execution): Promise<Answer> {
  let { first, firstBytes } = answer;
  const { jobId } = run;
  let polls = 0;
  let quick = 0;
  while (!first.jobComplete) {
    if (!jobId) throw malformedAnswer('jobs.query: incomplete job without jobReference', '');
    const remaining = call.deadline - q.now();
    if (remaining <= 0) throw deadlineExceeded(opts.timeoutMs, jobId);
    if (polls >= q.maxPolls) throw deadlineExceeded(opts.timeoutMs, jobId, `still running after ${polls} polls`);
    const waitMs = Math.min(remaining, q.maxPollWaitMs);
    const asked = q.now();
    const sent = await q.sendMeasured(
      {
        method: 'GET',
        path: `/queries/${encodeURIComponent(jobId)}`,
        query: { location: run.jobLocation, maxResults: Math.min(opts.rowCap, FIRST_PAGE_ROWS), timeoutMs: waitMs, ...INT64_TIMESTAMPS },
      },
      { ...call, op: 'jobs.getQueryResults' },
    );
    first = parseQueryResponse(sent.json, 'jobs.getQueryResults');
    firstBytes = sent.bytes;
    // The job's own answer says where it runs (a job accepted through 409 duplicate had no answer to say it).
    run.jobLocation = first.jobReference?.location ?? run.jobLocation;
    polls++;
    if (!first.jobComplete && q.now() - asked < waitMs / 2) {
      quick++;
      await q.sleep(Math.max(0, Math.min(backoffDelay(q.pollPolicy, quick, q.random), call.deadline - q.now())));
    }
  }
  return { first, firstBytes };
}

/**
 * The finished query's rows: the first answer's, then further pages until `rowCap` rows or the byte budget. Each
 * further page asks for as many rows as the budget left holds at the rows' size so far, so no page is parsed far
 * past the budget (review N5). A job-less answer is kept whole: it cannot be continued, and it is already held.
 */
async function readRows(
  q: Jobs,
  first: QueryResponse,
  firstBytes: number,
  opts: QueryOptions,
  call: Call,
  run: Execution,
): Promise<{ rows: Record<string, unknown>[]; schema: FieldSchema[] }> {
  const { jobId } = run;
  const rowCap = opts.rowCap;
  const schema = first.schema?.fields ?? [];
  const budget = { left: jobId ? (opts.maxResultBytes ?? Infinity) : Infinity, hit: false, kept: 0 };
  const rows = decodeRows(schema, withinBudget(first.rows ?? [], firstBytes, budget).slice(0, rowCap), decodeOpts);
  const rowBytes = Math.max(1, firstBytes / Math.max(1, first.rows?.length ?? 1));
  let pageToken = first.pageToken;
  while (rows.length < rowCap && pageToken && jobId && !budget.hit) {
    if (call.deadline - q.now() <= 0) throw deadlineExceeded(opts.timeoutMs, jobId);
    const fits = Number.isFinite(budget.left) ? Math.ceil(budget.left / rowBytes) : Infinity;
    const sent = await q.sendMeasured(
      {
        method: 'GET',
        path: `/queries/${encodeURIComponent(jobId)}`,
        query: {
          location: run.jobLocation,
          pageToken,
          maxResults: Math.max(1, Math.min(rowCap - rows.length, fits)),
          ...INT64_TIMESTAMPS,
        },
      },
      { ...call, op: 'jobs.getQueryResults(page)' },
    );
    const page = parseQueryResponse(sent.json, 'jobs.getQueryResults(page)');
    const pageRows = page.rows ?? [];
    // A page without rows and with the same token again would loop forever.
    if (pageRows.length === 0 && page.pageToken === pageToken) break;
    for (const row of decodeRows(schema, withinBudget(pageRows, sent.bytes, budget), decodeOpts)) rows.push(row);
    pageToken = page.pageToken;
  }
  if (rows.length > rowCap) rows.length = rowCap;
  return { rows, schema };
}

/**
 * A query that ended in an error: counts what it may have billed (a job is cancelled and settled, an unknown
 * submission counts the estimate) and returns the error to throw, its message matching what happened.
 */
async function failed(q: Jobs, err: unknown, opts: JobOptions, call: Call, run: Execution): Promise<unknown> {
  if (!(err instanceof ApiError) || QUERY_ERRORS.has(err.code)) return err;
  const { jobId, jobLocation, knownBilled, phase } = run;
  const unknown = opts.billedIfUnknown ?? 0;
  if (jobId === null && knownBilled !== null) {
    await reportLate(q, Promise.resolve(knownBilled), opts);
  } else if (jobId !== null) {
    // A job we know of and no longer wait for (deadline, or a failure while polling): stop it, count it.
    await reportLate(q, settleAbandoned(q, jobId, jobLocation, call, unknown, run.tables), opts);
  } else if (
    phase === 'submit' &&
    !call.tally.lastFailure?.refused &&
    !(call.tally.lastFailure && call.tally.lastFailure.status >= 400 && call.tally.lastFailure.status < 500)
  ) {
    // The submission's outcome is unknown (no answer, 5xx, a dropped connection): it may have run, and there
    // is no job id to find it by. jobTimeoutMs stops it; its bytes are counted at the estimate.
    call.log.warn('query submission outcome unknown; counting the estimate', { bytes: unknown, code: err.code });
    await reportLate(q, Promise.resolve(unknown), opts);
  }
  // The message must match what happened: a cancel is only requested for a job we know.
  const said = (err.internal as { jobId?: string | null } | undefined)?.jobId ?? null;
  if (err.code === 'WAREHOUSE_TIMEOUT' && said !== jobId) return deadlineExceeded(opts.timeoutMs, jobId);
  return err;
}

export async function readPage(q: Jobs, opts: PageOptions): Promise<PageResult> {
  const timeoutMs = opts.timeoutMs ?? configOf(q.env).QUERY_TIMEOUT_MS;
  const call = q.newCall(opts, 'jobs.getQueryResults(cursor)', timeoutMs, { readsStoredResult: true });
  const sent = await q.sendMeasured(
    {
      method: 'GET',
      path: `/queries/${encodeURIComponent(opts.jobId)}`,
      query: { location: opts.location, startIndex: opts.startIndex, maxResults: opts.maxResults, timeoutMs: 0, ...INT64_TIMESTAMPS },
    },
    call,
  );
  const page = parseQueryResponse(sent.json, 'jobs.getQueryResults(cursor)');
  // A cursor is only issued for a finished job, so an incomplete answer means the warehouse lost track of it.
  if (!page.jobComplete) throw malformedAnswer('jobs.getQueryResults(cursor): job of a cursor is not complete', '');
  const schema = page.schema?.fields ?? [];
  const budget = { left: opts.maxResultBytes ?? Infinity, hit: false, kept: 0 };
  const rows = decodeRows(schema, withinBudget((page.rows ?? []).slice(0, opts.maxResults), sent.bytes, budget), decodeOpts);
  return { rows, schema, totalRows: page.totalRows ?? opts.startIndex + rows.length };
}

/**
 * Rows of `page` kept within the byte budget. A page whose whole answer fits is kept without measuring; one that
 * crosses the budget is measured row by row (raw JSON size) and cut, at least one row overall.
 */
export function withinBudget(pageRows: unknown[], pageBytes: number, budget: { left: number; hit: boolean; kept: number }): unknown[] {
  if (pageBytes <= budget.left) {
    budget.left -= pageBytes;
    budget.kept += pageRows.length;
    return pageRows;
  }
  let n = 0;
  for (const row of pageRows) {
    const size = JSON.stringify(row).length + 1;
    if (size > budget.left && budget.kept + n > 0) break;
    budget.left -= size;
    n++;
  }
  budget.hit = n < pageRows.length || budget.left <= 0;
  budget.kept += n;
  return n < pageRows.length ? pageRows.slice(0, n) : pageRows;
}
