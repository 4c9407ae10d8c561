import { configOf, type Env } from '../env';
import { ApiError, describeError } from '../errors';
import type { PageOptions, PageResult, QueryOptions, QueryResult, WarehouseClientDeps } from './bigquery-client';
import { decodeRows } from './decode';
import { deadlineExceeded, malformedAnswer } from './errors';
import { sanitizeLabels } from './labels';
import { backoffDelay, DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry';
import { parseQueryResponse, type Call, type Transport } from './transport';
import { JobSchema, type FieldSchema, type QueryResponse } from './wire';

/**
 * The client's query jobs: submitting a query (the fast path or a job with a client-chosen id), waiting for it,
 * reading its pages within the row cap and byte budget, reading a cursor's page later, and settling a job it
 * gave up on (cancel, then jobs.get until DONE for what it billed). See docs/warehouse-client.md.
 */

/** Codes of errors about the query itself: BigQuery refused or failed it, and bills nothing for it. */
const QUERY_ERRORS = new Set(['QUERY_FAILED', 'QUERY_TOO_EXPENSIVE', 'FORBIDDEN_TABLE']);

/** Asks for TIMESTAMP as integer microseconds (lossless), as both official clients do. */
const INT64_TIMESTAMPS = { 'formatOptions.useInt64Timestamp': 'true' } as const;

const decodeOpts = { int64Timestamps: true };

/** Where one query stands, for the failure path: what was sent, which job, what it said it billed. */
interface RunState {
  /** Nothing answered yet (submission outcome unknown), or a known answer / job. */
  phase: 'submit' | 'job';
  jobId: string | null;
  jobLocation: string | undefined;
  /** What a job-less answer said it billed, so an error after it (an unreadable cell) still counts the bytes. */
  knownBilled: number | null;
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
export async function cancel(q: Jobs, jobId: string, jobLocation: string | undefined, call: Call): Promise<void> {
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

/** `getQueryResults` doesn't report bytes billed; the job does. Falls back to bytes processed if it can't. */
async function bytesBilled(q: Jobs, jobId: string, jobLocation: string | undefined, call: Call, fallback: number): Promise<number> {
  try {
    const job = JobSchema.safeParse(
      await q.send(
        { method: 'GET', path: `/jobs/${encodeURIComponent(jobId)}`, query: { location: jobLocation } },
        { ...call, op: 'jobs.get' },
      ),
    );
    const billed = job.success ? job.data.statistics?.query?.totalBytesBilled : undefined;
    if (billed !== undefined) return billed;
    call.log.warn('jobs.get had no totalBytesBilled; counting bytes processed', { jobId });
  } catch (err) {
    // The rows are already in hand: a failed lookup costs accuracy of the usage count, not the answer.
    call.log.warn('jobs.get failed; counting bytes processed', {
      jobId,
      error: describeError(err),
      upstream: err instanceof ApiError ? err.internal : undefined,
    });
  }
  return fallback;
}

/**
 * A job we stopped waiting for: cancel it, then poll `jobs.get` until BigQuery reports it DONE and read what it
 * billed. `jobs.cancel` returns at once while the job may still run ("the client will need to poll for the job
 * status ... Cancelled jobs may still incur costs", jobs.cancel in the BigQuery v2 reference), so the bytes are
 * only known later. Never rejects: a job BigQuery does not know billed nothing; `fallback` when it stays unknown.
 */
export async function settleAbandoned(
  q: Jobs,
  jobId: string,
  jobLocation: string | undefined,
  call: Call,
  fallback: number,
): Promise<number> {
  await cancel(q, jobId, jobLocation, call);
  const until = q.now() + q.settleTimeoutMs;
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
      if (job.success && job.data.status?.state === 'DONE') {
        const billed = job.data.statistics?.query?.totalBytesBilled ?? 0;
        call.log.info('abandoned warehouse job settled', { jobId, bytesBilled: billed, polls: attempt });
        return billed;
      }
    } catch (err) {
      if (call.tally.lastFailure?.status === 404) {
        call.log.info('abandoned warehouse job unknown to the warehouse; nothing billed', { jobId });
        return 0;
      }
      call.log.warn('jobs.get of an abandoned job failed', { jobId, error: describeError(err) });
    }
    const pause = backoffDelay(q.pollPolicy, attempt, q.random);
    if (q.now() + pause >= until) break;
    await q.sleep(pause);
  }
  call.log.warn('could not learn what an abandoned job billed; counting the estimate', { jobId, bytes: fallback });
  return fallback;
}

/** Reports `late` to the caller and keeps it running past the answer (or awaits it without waitUntil). */
async function reportLate(q: Jobs, late: Promise<number>, opts: QueryOptions): Promise<void> {
  opts.onLateBilling?.(late);
  if (q.deps.waitUntil) q.deps.waitUntil(late);
  else await late;
}

export function jobTimeoutMs(q: Jobs, timeoutMs: number): string {
  return String(timeoutMs + q.jobTimeoutMarginMs);
}

export async function runQuery(q: Jobs, sql: string, opts: QueryOptions): Promise<QueryResult> {
  const call = q.newCall(opts, opts.requireJob ? 'jobs.insert' : 'jobs.query', opts.timeoutMs, { maxBytesBilled: opts.maxBytesBilled });
  const run: RunState = { phase: 'submit', jobId: null, jobLocation: q.location, knownBilled: null };
  try {
    const submitted = opts.requireJob ? await submitAsJob(q, sql, opts, call, run) : await submitFastPath(q, sql, opts, call, run);
    const { first, firstBytes } = await awaitCompletion(q, submitted, opts, call, run);
    const { jobId, jobLocation } = run;
    const { rows, schema } = await readRows(q, first, firstBytes, opts, call, run);

    const totalBytesProcessed = first.totalBytesProcessed ?? 0;
    const totalRows = Math.max(first.totalRows ?? 0, rows.length);
    if (!jobId && rows.length < totalRows) {
      // A job-less answer cut by the byte budget: a cursor needs a job. Run it again as one; the first run put
      // its result in the query cache, so this one bills nothing (BigQuery: cached results are not charged).
      call.log.info('job-less result cut by the byte budget; running it as a job for a cursor', { rows: rows.length, totalRows });
      const again = await runQuery(q, sql, { ...opts, requireJob: true, timeoutMs: Math.max(1, call.deadline - q.now()) });
      return {
        ...again,
        totalBytesBilled: again.totalBytesBilled + (first.totalBytesBilled ?? totalBytesProcessed),
        requests: again.requests + call.tally.requests,
      };
    }
    const totalBytesBilled =
      first.totalBytesBilled ?? (jobId ? await bytesBilled(q, jobId, jobLocation, call, totalBytesProcessed) : totalBytesProcessed);
    return {
      rows,
      schema,
      truncated: rows.length < totalRows,
      totalRows,
      totalBytesProcessed,
      totalBytesBilled,
      jobId,
      location: jobLocation ?? null,
      queryId: first.queryId ?? null,
      requests: call.tally.requests,
    };
  } catch (err) {
    throw await failed(q, err, opts, call, run);
  }
}

/**
 * Idempotent by a client-chosen job id (`jobs.insert`): a resend after a lost answer meets 409 duplicate (our own
 * job), never a second job, and the id is known even when no answer came, so the job can be cancelled and billed.
 */
async function submitAsJob(q: Jobs, sql: string, opts: QueryOptions, call: Call, run: RunState): Promise<Answer> {
  const jobId = `wqa_${crypto.randomUUID().replaceAll('-', '')}`;
  run.jobId = jobId;
  const inserted = JobSchema.safeParse(
    await q.send(
      {
        method: 'POST',
        path: '/jobs',
        body: {
          jobReference: { projectId: q.env.BIGQUERY_PROJECT, jobId, location: q.location },
          configuration: {
            labels: sanitizeLabels(opts.labels),
            jobTimeoutMs: jobTimeoutMs(q, opts.timeoutMs),
            query: { query: sql, useLegacySql: false, maximumBytesBilled: String(opts.maxBytesBilled) },
          },
        },
      },
      call,
      { accept: (f, attempt) => attempt > 1 && f.status === 409 && f.reasons.includes('duplicate') },
    ),
  );
  run.jobLocation = (inserted.success ? inserted.data.jobReference?.location : undefined) ?? q.location;
  run.phase = 'job';
  return { first: { jobComplete: false }, firstBytes: 0 };
}

/**
 * The fast path (jobs.query, JOB_CREATION_OPTIONAL): a short query answers in this one request, without a job.
 * BigQuery may ignore `requestId` for read-only queries, so this request is resent only after a refusal (429,
 * rateLimitExceeded): after any other failure it may have run, and a resend could run it again. See
 * docs/warehouse-client.md, "Which path, when".
 */
async function submitFastPath(q: Jobs, sql: string, opts: QueryOptions, call: Call, run: RunState): Promise<Answer> {
  const sent = await q.sendMeasured(
    {
      method: 'POST',
      path: '/queries',
      body: {
        query: sql,
        useLegacySql: false,
        maximumBytesBilled: String(opts.maxBytesBilled),
        maxResults: opts.rowCap,
        timeoutMs: Math.max(0, call.deadline - q.now()),
        jobTimeoutMs: jobTimeoutMs(q, opts.timeoutMs),
        jobCreationMode: 'JOB_CREATION_OPTIONAL',
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
async function awaitCompletion(q: Jobs, answer: Answer, opts: QueryOptions, call: Call, run: RunState): Promise<Answer> {
  let { first, firstBytes } = answer;
  const { jobId, jobLocation } = run;
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
        query: { location: jobLocation, maxResults: opts.rowCap, timeoutMs: waitMs, ...INT64_TIMESTAMPS },
      },
      { ...call, op: 'jobs.getQueryResults' },
    );
    first = parseQueryResponse(sent.json, 'jobs.getQueryResults');
    firstBytes = sent.bytes;
    polls++;
    if (!first.jobComplete && q.now() - asked < waitMs / 2) {
      quick++;
      await q.sleep(Math.max(0, Math.min(backoffDelay(q.pollPolicy, quick, q.random), call.deadline - q.now())));
    }
  }
  return { first, firstBytes };
}

/** The finished query's rows: the first answer's, then further pages until `rowCap` rows or the byte budget. */
async function readRows(
  q: Jobs,
  first: QueryResponse,
  firstBytes: number,
  opts: QueryOptions,
  call: Call,
  run: RunState,
): Promise<{ rows: Record<string, unknown>[]; schema: FieldSchema[] }> {
  const { jobId, jobLocation } = run;
  const rowCap = opts.rowCap;
  const schema = first.schema?.fields ?? [];
  const budget = { left: opts.maxResultBytes ?? Infinity, hit: false, kept: 0 };
  const rows = decodeRows(schema, withinBudget(first.rows ?? [], firstBytes, budget).slice(0, rowCap), decodeOpts);
  let pageToken = first.pageToken;
  while (rows.length < rowCap && pageToken && jobId && !budget.hit) {
    if (call.deadline - q.now() <= 0) throw deadlineExceeded(opts.timeoutMs, jobId);
    const sent = await q.sendMeasured(
      {
        method: 'GET',
        path: `/queries/${encodeURIComponent(jobId)}`,
        query: { location: jobLocation, pageToken, maxResults: rowCap - rows.length, ...INT64_TIMESTAMPS },
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
async function failed(q: Jobs, err: unknown, opts: QueryOptions, call: Call, run: RunState): Promise<unknown> {
  if (!(err instanceof ApiError) || QUERY_ERRORS.has(err.code)) return err;
  const { jobId, jobLocation, knownBilled, phase } = run;
  const unknown = opts.billedIfUnknown ?? 0;
  if (jobId === null && knownBilled !== null) {
    await reportLate(q, Promise.resolve(knownBilled), opts);
  } else if (jobId !== null) {
    // A job we know of and no longer wait for (deadline, or a failure while polling): stop it, count it.
    await reportLate(q, settleAbandoned(q, jobId, jobLocation, call, unknown), opts);
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
