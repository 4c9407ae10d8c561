import type { OpContext } from '../../context';
import { configOf, type Env } from '../../env';
import { ApiError, describeError, isErrorCode } from '../../errors';
import { newId } from '../../lib/ids';
import { createLogger, type Logger } from '../../lib/log';
import { settleRun } from '../../usage/usage';
import { rowOwner } from '../../auth/ownership';
import { createWarehouseClient, type JobRef, type WarehouseClient } from '../../warehouse/bigquery-client';
import { mapUpstreamError } from '../../warehouse/errors';
import { deliverQueryLog } from '../query/query-log';
import { checkPosition, RESULT_CURSOR_TTL_MS } from '../query/result-cursor';
import { HandedOff, readResultPage, runQuery, type AdmittedRun, type RunQueryOptions, type RunQueryOutcome } from '../query/run-query';
import type { RunQueryRequest } from '../query/run-query.input';
import { ResolvedWindowSchema } from '../query/run-query.schemas';
import {
  endJob,
  insertJob,
  isLive,
  jobLimits,
  markCancelling,
  ownJob,
  readJob,
  recordProgress,
  recordTotalRows,
  runningJobs,
  tooManyRunning,
  type JobEnd,
  type JobLimits,
  type JobRow,
} from './job-store';

/**
 * Long queries: a query that may outlive the request that started it (a REST async job, an MCP task, a plain
 * run_query past LONG_QUERY_WAIT_MS). The run is checked and admitted exactly as a synchronous one (runQuery: guard,
 * dry run, byte ceiling, usage reservation), then handed here: its record is written to D1 (job-store.ts), its alarm
 * set (job-alarm.ts), and its BigQuery job submitted under an id chosen before it is sent. From then on `advance`
 * moves it along, whoever calls it (a poll, a cancel, the alarm): it asks BigQuery how the job stands, cancels it
 * past the key's longest duration, and when BigQuery reports it DONE ends the record, settles the reservation to
 * what BigQuery billed and writes the query_log row, once.
 */

/** Long-poll of one warehouse wait (BigQuery's own default for getQueryResults). */
const MAX_WAIT_SLICE_MS = 10_000;
/** Our own deadline is BigQuery's (jobTimeoutMs) plus this: BigQuery normally ends the job first. */
const DEADLINE_MARGIN_MS = 60_000;
/** When the alarm first asks about a job recorded after the call's wait: the young job's step (nextCheck). */
const FIRST_CHECK_MS = 5_000;

export type LongAnswer = { done: RunQueryOutcome; job: JobRow | null } | { pending: JobRow };

/**
 * The limits a long run of `input` is held to, refused before the run is counted when the key already runs its
 * most long jobs; null for a dry run (nothing runs). `group`: runs started together as one (a report's sections)
 * share the one running-job slot checked here.
 */
async function admitLimits(ctx: OpContext, input: RunQueryRequest, group?: { size: number }): Promise<JobLimits | null> {
  if (input.dryRun === true) return null;
  const own = jobLimits(ctx.principal);
  const limits = group ? { ...own, maxRunningJobs: own.maxRunningJobs + group.size - 1 } : own;
  // The record's insert checks again, in the same statement, against a start racing this one.
  if ((await runningJobs(ctx.env, ctx.principal)) >= limits.maxRunningJobs) throw tooManyRunning(limits);
  return limits;
}

/**
 * Starts `input` as a long query from the start (recorded before it is sent) and waits up to `waitMs` for it: its
 * result (what a synchronous run answers) if it ended in time, its error if it failed, else the pending job. For
 * answers that must be a job at once (REST `Prefer: respond-async`, an MCP 2025 task, a report's sections as one
 * task). A dry run is answered at once (nothing runs).
 */
export async function startLongQuery(
  ctx: OpContext,
  input: RunQueryRequest,
  waitMs: number,
  opts: RunQueryOptions = {},
  /** Runs started together as one (a report's sections): they share the one running-job slot checked by the caller. */
  group?: { size: number },
): Promise<LongAnswer> {
  const limits = await admitLimits(ctx, input, group);
  let handle: string;
  try {
    return { done: await runQuery(ctx, input, { ...opts, handOff: (run) => recordAndSubmit(ctx, run, limits!) }), job: null };
  } catch (err) {
    if (!(err instanceof HandedOff)) throw err;
    handle = err.handle;
  }
  return waitForJob(ctx, handle, waitMs, opts);
}

/**
 * Runs `input` as a synchronous run does (one `jobs.query`, REST's warehouse calls), waiting up to `waitMs`; only a
 * query still running then becomes a long query: its BigQuery job, left running, is recorded (D1 row, alarm) before
 * the call answers it pending. A plain MCP run_query. The key's running-job limit is checked first, as for any
 * run that may become a long one.
 */
export async function runOrKeepRunning(
  ctx: OpContext,
  input: RunQueryRequest,
  waitMs: number,
  opts: RunQueryOptions = {},
): Promise<LongAnswer> {
  const limits = await admitLimits(ctx, input);
  if (!limits) return { done: await runQuery(ctx, input, opts), job: null };
  const overtime = {
    waitMs,
    jobTimeoutMs: limits.jobTimeoutMs,
    adopt: (run: AdmittedRun, job: JobRef) => recordRunning(ctx, run, limits, job),
  };
  let handle: string;
  try {
    return { done: await runQuery(ctx, input, { ...opts, overtime }), job: null };
  } catch (err) {
    if (!(err instanceof HandedOff)) throw err;
    handle = err.handle;
  }
  const row = await readJob(ctx.env, handle);
  if (!row) throw new ApiError('INTERNAL', 'the long query record disappeared');
  return answerFor(ctx, row, opts);
}

/** The record of an admitted run under BigQuery job `bq`, and its alarm first looking at `firstCheck`. */
async function recordJob(
  ctx: OpContext,
  run: AdmittedRun,
  limits: JobLimits,
  bq: { jobId: string; location: string },
  createdAt: number,
  firstCheck: number,
): Promise<string> {
  const { env, principal } = ctx;
  const id = newId('qj');
  const row = {
    id,
    principal_kind: principal.kind,
    principal_id: principal.id,
    // Owned as its log row is (rowOwner): the brand's organization, whoever the caller is.
    org_id: rowOwner(principal, { id: run.brandId, orgId: run.brandOrgId }).orgId,
    user_id: principal.userId ?? null,
    client_name: principal.clientName ?? null,
    brand_id: run.brandId,
    query_id: run.queryId,
    period: run.window ? JSON.stringify(run.window) : null,
    sql: run.sql,
    transport: ctx.transport,
    request_id: ctx.requestId,
    bq_job_id: bq.jobId,
    bq_location: bq.location,
    ticket_id: run.ticket.id,
    reserved_bytes: run.ticket.reservedBytes,
    estimate_bytes: run.estimate,
    created_at: createdAt,
    deadline_at: createdAt + limits.jobTimeoutMs + DEADLINE_MARGIN_MS,
    result_expires_at: createdAt + RESULT_CURSOR_TTL_MS,
  };
  if (!(await insertJob(env, row, limits.maxRunningJobs))) throw tooManyRunning(limits);
  // From here the record owns the run: nothing below throws.
  try {
    // If this isolate dies from here on, the alarm still finds the job, cancels it past its deadline and bills it.
    await watchJob(env, id, firstCheck);
  } catch (err) {
    ctx.log.error('long query alarm not set; the next poll advances it', { internal: describeError(err), jobId: id });
  }
  return id;
}

/**
 * The hand-off of a job still running when the call's wait ran out (`overtime`): recorded under BigQuery's own job
 * id, its alarm set, before the call answers. Throws only before the record exists (the run then cancels the job).
 */
async function recordRunning(ctx: OpContext, run: AdmittedRun, limits: JobLimits, job: JobRef): Promise<string> {
  const now = Date.now();
  const location = job.location ?? ctx.env.BIGQUERY_LOCATION ?? '';
  // Started when the call was: the job's elapsed time, deadline and result lifetime count from the run.
  return recordJob(ctx, run, limits, { jobId: job.jobId, location }, Math.min(ctx.now, now), now + FIRST_CHECK_MS);
}

/** The hand-off: record, watch, submit. Throws only before the record exists (runQuery then settles at 0). */
async function recordAndSubmit(ctx: OpContext, run: AdmittedRun, limits: JobLimits): Promise<string> {
  const { env, principal } = ctx;
  const now = Date.now();
  const bq = { jobId: `wqj_${crypto.randomUUID().replaceAll('-', '')}`, location: env.BIGQUERY_LOCATION ?? '' };
  // The alarm first looks after the call's wait; if this isolate dies after the submission, it finds the job.
  const id = await recordJob(ctx, run, limits, bq, now, now + Math.max(1_000, configOf(env).LONG_QUERY_WAIT_MS));
  try {
    const ref = await run.client.submitJob(run.sent, {
      brandId: run.brandId,
      dataset: run.dataset,
      requestId: ctx.requestId,
      labels: { ...run.labels, long_job: id },
      jobId: bq.jobId,
      maxBytesBilled: principal.limits.maxBytesBilled,
      jobTimeoutMs: limits.jobTimeoutMs,
      timeoutMs: ctx.config.QUERY_TIMEOUT_MS,
      billedIfUnknown: run.ticket.reservedBytes,
    });
    if (ref.location && ref.location !== bq.location) {
      await env.DB.prepare('UPDATE query_jobs SET bq_location = ? WHERE id = ?').bind(ref.location, id).run();
    }
  } catch (err) {
    // Refused, or its outcome unknown: advance asks BigQuery whether the job exists and ends the record either way.
    ctx.log.warn('long query submission failed; asking the warehouse how it stands', { internal: describeError(err), jobId: id });
    const current = await readJob(env, id);
    if (current) await advance(env, current, Date.now(), ctx.log, { submitError: err });
  }
  return id;
}

/** The BigQuery job of `row`. */
function jobRef(row: JobRow): JobRef {
  return { jobId: row.bq_job_id, location: row.bq_location || null };
}

/** Who asks about the job of `row` (the brand's account), for one bounded call. */
function callOpts(row: JobRow, requestId: string) {
  return { brandId: row.brand_id, requestId, labels: {}, timeoutMs: 10_000 };
}

/**
 * Waits up to `waitMs` for the job (BigQuery's long poll, reading one row at most); the rows it holds once it
 * finished. `ended` without rows: it failed, or the warehouse could not be asked (then `advance` finds out).
 */
async function waitSlice(
  client: WarehouseClient,
  row: JobRow,
  ctx: OpContext,
  waitMs: number,
): Promise<{ ended: boolean; totalRows?: number }> {
  try {
    const r = await client.awaitJob(jobRef(row), {
      ...callOpts(row, ctx.requestId),
      maxBytesBilled: ctx.principal.limits.maxBytesBilled,
      rowCap: 1,
      timeoutMs: waitMs,
      leaveRunning: true,
      // advance's jobs.get (right after this) reads what the job billed: not asked twice.
      bytesAskedElsewhere: true,
    });
    return { ended: true, totalRows: r.totalRows };
  } catch (err) {
    return { ended: !(err instanceof ApiError && err.code === 'WAREHOUSE_TIMEOUT') };
  }
}

/** Waits up to `waitMs` for the job, advancing it when BigQuery says it ended; then answers as `answerFor` does. */
async function waitForJob(ctx: OpContext, id: string, waitMs: number, opts: RunQueryOptions): Promise<LongAnswer> {
  return answerFor(ctx, await waitRow(ctx, id, waitMs), opts);
}

/** The owner's wait: up to `waitMs` for its job to end (MCP 2025 `tasks/result` blocks); the job as it then stands. */
export async function waitJob(ctx: OpContext, id: string, waitMs: number): Promise<JobRow> {
  await ownJob(ctx.env, ctx.principal, id);
  return waitRow(ctx, id, waitMs);
}

/** Waits up to `waitMs` for the job, advancing it when BigQuery says it ended; the job as it then stands. */
async function waitRow(ctx: OpContext, id: string, waitMs: number): Promise<JobRow> {
  const client = createWarehouseClient(ctx.env, { waitUntil: ctx.waitUntil });
  const until = Date.now() + waitMs;
  let row = await readJob(ctx.env, id);
  while (row && isLive(row) && Date.now() < until) {
    const slice = await waitSlice(client, row, ctx, Math.min(until - Date.now(), MAX_WAIT_SLICE_MS));
    if (!slice.ended) continue;
    row = await advance(ctx.env, row, Date.now(), ctx.log, { client });
    if (slice.totalRows !== undefined && row.status === 'done' && row.total_rows === null) {
      await recordTotalRows(ctx.env, row.id, slice.totalRows);
      row = { ...row, total_rows: slice.totalRows };
    }
    // Still live after it "ended": the warehouse could not be asked. Not a tight loop of failures.
    if (isLive(row)) await new Promise((r) => setTimeout(r, Math.min(1_000, Math.max(0, until - Date.now()))));
  }
  if (!row) throw new ApiError('INTERNAL', 'the long query record disappeared');
  return row;
}

/** A job as an answer: its result when done, its error when it failed or was stopped, else pending. */
export async function answerFor(ctx: OpContext, row: JobRow, opts: RunQueryOptions): Promise<LongAnswer> {
  if (isLive(row)) return { pending: row };
  if (row.status === 'done') return { done: await jobResult(ctx, row, opts), job: row };
  throw jobError(row);
}

/** The error a failed, cancelled or expired job ended with, as the caller sees it. */
export function jobError(row: JobRow): ApiError {
  const code = isErrorCode(row.error_code) ? row.error_code : 'WAREHOUSE_ERROR';
  return new ApiError(code, row.error_message ?? 'the long query failed', { details: { jobId: row.id, status: row.status } });
}

/**
 * A finished job's first page, read from BigQuery's stored result exactly as a cursor page is (no new run, nothing
 * billed; a page read), with the job's own bytes as its stats. Past the result's lifetime: RESULT_GONE.
 */
export async function jobResult(ctx: OpContext, row: JobRow, opts: RunQueryOptions): Promise<RunQueryOutcome> {
  if (ctx.now > row.result_expires_at) {
    throw new ApiError(
      'RESULT_GONE',
      `the result of ${row.id} is no longer kept (results last ${RESULT_CURSOR_TTL_MS / 3_600_000} hours); run the query again`,
      { details: { jobId: row.id } },
    );
  }
  const window = row.period ? ResolvedWindowSchema.parse(JSON.parse(row.period)) : undefined;
  // Read at its position directly, with a cursor's checks but no cursor to sign and open; a first read learns the
  // result's size from the page itself (no separate read for it).
  const pos = {
    brandId: row.brand_id,
    jobId: row.bq_job_id,
    location: row.bq_location,
    offset: 0,
    totalRows: row.total_rows,
    expiresAt: row.result_expires_at,
    ...(row.query_id ? { queryId: row.query_id } : {}),
    ...(window ? { window } : {}),
  };
  checkPosition(ctx.principal, pos, ctx.now);
  const out = await readResultPage(ctx, pos, opts);
  if (row.total_rows === null) await recordTotalRows(ctx.env, row.id, out.result.totalRows);
  return {
    ...out,
    result: {
      ...out.result,
      stats: { dryRun: false, totalBytesBilled: row.bytes_billed ?? 0, totalBytesProcessed: row.bytes_processed ?? 0 },
    },
  };
}

/** The owner's poll: advances the job, then answers it (result, error or pending). */
export async function pollJob(ctx: OpContext, id: string, opts: RunQueryOptions = {}): Promise<LongAnswer> {
  let row = await ownJob(ctx.env, ctx.principal, id);
  if (isLive(row)) row = await advance(ctx.env, row, Date.now(), ctx.log);
  return answerFor(ctx, row, opts);
}

/** The owner's poll as a status only (no result read): for status resources and task status. */
export async function jobStatusOf(ctx: OpContext, id: string): Promise<JobRow> {
  const row = await ownJob(ctx.env, ctx.principal, id);
  return isLive(row) ? advance(ctx.env, row, Date.now(), ctx.log) : row;
}

/** The owner's cancel: `jobs.cancel`, then the record waits for BigQuery to report the job ended, and settles. */
export async function cancelLongJob(ctx: OpContext, id: string): Promise<JobRow> {
  return cancelJobRow(ctx.env, await ownJob(ctx.env, ctx.principal, id), ctx.requestId, ctx.log);
}

/** Cancels the job of `row` (its owner's, or an administrator's who may see it) and answers it as it now stands. */
export async function cancelJobRow(env: Env, row: JobRow, requestId: string, log: Logger): Promise<JobRow> {
  if (row.status !== 'running') return row;
  const client = createWarehouseClient(env);
  await markCancelling(env, row.id, 'caller');
  // jobs.cancel, then jobs.get until BigQuery reports the job stopped (bounded); advance then ends the record.
  await client.cancelJob(jobRef(row), { ...callOpts(row, requestId), billedIfUnknown: row.reserved_bytes });
  const current = (await readJob(env, row.id)) ?? row;
  return advance(env, current, Date.now(), log, { client });
}

/**
 * One step of a live job's state machine, safe to run from anywhere at any time: asks BigQuery how the job stands;
 * cancels it past its deadline; ends and settles it when BigQuery reports it DONE (or unknown). Returns the row as
 * it now stands. A warehouse that cannot be asked leaves the job as it was (the alarm asks again).
 */
export async function advance(
  env: Env,
  row: JobRow,
  now: number,
  log: Logger,
  opts: { client?: WarehouseClient; submitError?: unknown } = {},
): Promise<JobRow> {
  if (!isLive(row)) return row;
  const client = opts.client ?? createWarehouseClient(env);
  let status;
  try {
    status = await client.jobStatus(jobRef(row), callOpts(row, row.request_id));
  } catch (err) {
    // jobs.get reads as a stored result: a job BigQuery does not know is the "result gone" refusal.
    if (err instanceof ApiError && err.code === 'VALIDATION') status = null;
    else {
      log.warn('long query status unavailable; asking again later', { jobId: row.id, internal: describeError(err) });
      return row;
    }
  }
  if (status === null) {
    // BigQuery does not know the job: it never ran (a refused submission), so it billed nothing.
    const why = opts.submitError instanceof ApiError ? opts.submitError : null;
    return finish(env, row, log, {
      status: 'failed',
      bytesProcessed: null,
      bytesBilled: 0,
      totalRows: null,
      errorCode: why?.code ?? 'WAREHOUSE_ERROR',
      errorMessage: why?.message ?? 'the warehouse has no record of this job; it did not run',
      at: now,
    });
  }
  if (status.state === 'DONE') {
    const { error, totalBytesProcessed, totalBytesBilled } = status;
    const stopped = error?.reason === 'stopped';
    const ended = (s: JobEnd['status'], errorCode: string | null, errorMessage: string | null): JobEnd => ({
      status: s,
      bytesProcessed: totalBytesProcessed,
      bytesBilled: totalBytesBilled ?? 0,
      totalRows: null,
      errorCode,
      errorMessage,
      at: now,
    });
    let end: JobEnd;
    if (!error) end = ended('done', null, null);
    else if (error.reason === 'timeout' || (stopped && row.cancel_reason === 'deadline')) {
      end = ended(
        'expired',
        'WAREHOUSE_TIMEOUT',
        "the query ran past this key's longest job duration and was cancelled; narrow it or ask for a longer limit",
      );
    } else if (stopped) {
      end = ended('cancelled', 'QUERY_CANCELLED', 'the query was cancelled by its owner; what it billed before it stopped is counted');
    } else {
      // The failure as a synchronous run would have answered it (BigQuery's reason mapped the one way).
      const failure = { code: 400, message: error.message ?? '', errors: [{ reason: error.reason ?? '', message: error.message ?? '' }] };
      const mapped = mapUpstreamError(400, JSON.stringify({ error: failure })).error;
      end = ended('failed', mapped.code, mapped.message);
    }
    return finish(env, row, log, end);
  }
  if (status.totalBytesProcessed > 0 && status.totalBytesProcessed !== row.bytes_processed) {
    await recordProgress(env, row.id, status.totalBytesProcessed);
  }
  if (row.status === 'running' && now >= row.deadline_at) {
    // BigQuery's own jobTimeoutMs should have ended it; this is the backstop for a job that outlived it.
    await markCancelling(env, row.id, 'deadline');
    log.info('long query past its deadline; cancelling it', { jobId: row.id });
    await client.cancelJob(jobRef(row), { ...callOpts(row, row.request_id), billedIfUnknown: row.reserved_bytes });
    const cancelled = await readJob(env, row.id);
    if (cancelled) return advance(env, cancelled, now, log, { client });
  }
  return (await readJob(env, row.id)) ?? row;
}

/** Ends the record; the caller whose update ended it settles the reservation and writes the log row. */
async function finish(env: Env, row: JobRow, log: Logger, end: JobEnd): Promise<JobRow> {
  if (await endJob(env, row.id, end)) {
    if (row.ticket_id !== null) {
      try {
        await settleRun(env, { kind: row.principal_kind, id: row.principal_id }, { id: row.ticket_id }, { bytesBilled: end.bytesBilled });
      } catch (err) {
        log.error('usage settle failed', {
          internal: describeError(err),
          ticket: row.ticket_id,
          bytesBilled: end.bytesBilled,
          jobId: row.id,
        });
      }
    }
    await deliverQueryLog(
      env,
      {
        kind: 'query-log',
        id: newId('ql'),
        requestId: row.request_id,
        principalKind: row.principal_kind,
        principalId: row.principal_id,
        orgId: row.org_id,
        userId: row.user_id,
        clientName: row.client_name,
        brandId: row.brand_id,
        queryId: row.query_id,
        period: row.period,
        sql: row.sql,
        dryRun: 0,
        transport: row.transport,
        outcome: end.errorCode ?? 'OK',
        bytesProcessed: end.bytesProcessed ?? row.bytes_processed,
        bytesBilled: end.bytesBilled,
        rowCount: end.totalRows,
        durationMs: end.at - row.created_at,
        createdAt: row.created_at,
        errorMessage: end.errorMessage,
        bqJobId: row.bq_job_id,
        bqLocation: row.bq_location,
        asyncJobId: row.id,
      },
      log,
    );
    log.info('long query ended', { jobId: row.id, status: end.status, bytesBilled: end.bytesBilled, durationMs: end.at - row.created_at });
  }
  return (await readJob(env, row.id)) ?? row;
}

/** When the job should next be asked about: soon while young or cancelling, then less often; null once it ended. */
export function nextCheck(row: JobRow, now: number): number | null {
  if (!isLive(row)) return null;
  if (row.status === 'cancelling') return now + 2_000;
  const elapsed = now - row.created_at;
  const step = elapsed < 60_000 ? 5_000 : elapsed < 600_000 ? 15_000 : 60_000;
  return Math.min(now + step, Math.max(row.deadline_at, now + 1_000));
}

/** Sets the job's alarm (job-alarm.ts) to first look at it at `at`. */
async function watchJob(env: Env, jobId: string, at: number): Promise<void> {
  await env.QUERY_JOB_ALARM.getByName(jobId).watch(jobId, at);
}

/** The alarm's step: advance the job by id; when to look again (null: it ended). */
export async function alarmStep(env: Env, id: string, now: number): Promise<number | null> {
  const row = await readJob(env, id);
  if (!row) return null;
  const log = createLogger(row.request_id);
  const next = await advance(env, row, now, log);
  return nextCheck(next, Date.now());
}
