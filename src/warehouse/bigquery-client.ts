import type { Env } from '../env';
import { configOf } from '../env';
import { ApiError, describeError } from '../errors';
import { createLogger, type Logger } from '../lib/log';
import { credentialFor, type ServiceAccount } from './credentials';
import { decodeRows } from './decode';
import { deadlineExceeded, malformedAnswer, mapUpstreamError, networkFailure, type UpstreamContext, type UpstreamFailure } from './errors';
import { bearerTokenFor } from './jwt';
import { sanitizeLabels } from './labels';
import { backoffDelay, DEFAULT_RETRY_POLICY, nextRetryDelay, parseRetryAfter, type RetryPolicy } from './retry';
import {
  DryRunQueryStatisticsSchema,
  JobSchema,
  QueryResponseSchema,
  TableListSchema,
  TableResourceSchema,
  type FieldSchema,
  type QueryResponse,
  type TableFieldSchema,
} from './wire';

/**
 * The one BigQuery client: REST v2 over `fetch`, service-account JWTs signed with WebCrypto. It uses nothing
 * Worker-specific, so Node (the benchmark) can run it unchanged. See docs/warehouse-client.md.
 */

export type { FieldSchema, TableFieldSchema } from './wire';

export interface TableRef {
  projectId: string;
  datasetId: string;
  tableId: string;
}

export interface RoutineRef {
  projectId: string;
  datasetId: string;
  routineId: string;
}

export interface DryRunResult {
  /** BigQuery's statement type, e.g. SELECT; the guard requires SELECT. */
  statementType: string;
  referencedTables: TableRef[];
  referencedRoutines: RoutineRef[];
  /** Every other `referenced*` entry of `statistics.query`, as BigQuery sent it (the gate refuses non-empty ones). */
  otherReferences: Record<string, unknown>;
  /** The dry run was answered from the query cache (it asks not to be); its reference lists may then be empty. */
  cacheHit: boolean;
  totalBytesProcessed: number;
}

export interface QueryResult {
  /** At most `rowCap` rows, decoded to plain JSON (see decode.ts for the number rules). */
  rows: Record<string, unknown>[];
  schema: FieldSchema[];
  /** More rows existed than `rowCap`. */
  truncated: boolean;
  /** Rows in the whole result (BigQuery's `totalRows`); at least `rows.length`. */
  totalRows: number;
  totalBytesProcessed: number;
  totalBytesBilled: number;
  jobId: string | null;
  /** Where the job ran; with `jobId`, what `readPage` needs to read more of the stored result. */
  location: string | null;
  /** BigQuery's id of a query that ran without a job (JOB_CREATION_OPTIONAL); for the log. */
  queryId: string | null;
  /** Warehouse round trips this query took (HTTP requests, retries included), for the log and the benchmark. */
  requests: number;
}

/** One page of a finished job's stored result (`jobs.getQueryResults` with `startIndex`). */
export interface PageResult {
  rows: Record<string, unknown>[];
  schema: FieldSchema[];
  totalRows: number;
}

/** A table's metadata as `tables.get` gives it (the fields this service reads of BigQuery's Table resource). */
export interface TableInfo {
  /** Columns with their types and descriptions (nested `fields` for RECORD). */
  schema: TableFieldSchema[];
  description: string | null;
  /** Rows in the table (BigQuery's `numRows`; absent for views and external tables). */
  numRows: number | null;
  numBytes: number | null;
  labels: Record<string, string>;
  /** TABLE, VIEW, MATERIALIZED_VIEW, EXTERNAL, SNAPSHOT. */
  type: string | null;
  /** Last change to the table's data or metadata, ms since the epoch. */
  lastModifiedTime: number | null;
}

export interface DatasetOptions extends CallOptions {
  dataset: string;
  /** Deadline including retries (every page of a list). Default: QUERY_TIMEOUT_MS. */
  timeoutMs?: number;
}

export interface TableOptions extends DatasetOptions {
  table: string;
}

/** One table of a dataset as `tables.list` gives it (no schema, description or row count: `getTable` has those). */
export interface TableListEntry {
  table: string;
  type: string | null;
  labels: Record<string, string>;
}

/** Pages of `tables.list` read at most (1,000 tables each). */
const MAX_TABLE_LIST_PAGES = 10;

export interface PageOptions extends CallOptions {
  jobId: string;
  location: string;
  /** First row (0-based) of the page. */
  startIndex: number;
  /** Most rows wanted; BigQuery may send fewer (it also caps a page at about 10 MB). */
  maxResults: number;
  /** Deadline of the read, retries included. Default: QUERY_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Byte budget of the page's rows (their JSON size as BigQuery sent them); rows past it are left for the next page. */
  maxResultBytes?: number;
}

interface CallOptions {
  brandId: string;
  /** The brand's dataset, so a table missing from it reads as a typo (QUERY_FAILED), not a permission problem. */
  dataset?: string;
  /** The service's request id: every log line carries it. (BigQuery's own idempotency id is separate.) */
  requestId: string;
  /** Job labels for cost attribution; sanitised to BigQuery's label rules. */
  labels: Record<string, string>;
}

export interface DryRunOptions extends CallOptions {
  /** Sent as `maximumBytesBilled` when given. */
  maxBytesBilled?: number;
  /** Deadline for the dry run including retries. Default: QUERY_TIMEOUT_MS. */
  timeoutMs?: number;
}

export interface QueryOptions extends CallOptions {
  /** Per-key byte-scan ceiling, sent as `maximumBytesBilled` so BigQuery enforces it too. */
  maxBytesBilled: number;
  /** Rows kept at most; whether more exist comes from BigQuery's `totalRows`. */
  rowCap: number;
  /**
   * Byte budget of the rows kept (their JSON size as BigQuery sent them, which is larger than the decoded rows):
   * pages stop being fetched once it is reached and the rest is left to a cursor. Default: no budget.
   */
  maxResultBytes?: number;
  /**
   * Run it as a job with a client-chosen id (`jobs.insert` + `getQueryResults`) instead of the fast path, so a
   * cursor can read past what is returned. The client does this by itself when a job-less result must be cut.
   */
  requireJob?: boolean;
  /** Bytes to count when what a timed-out or lost query billed can never be learned (the dry-run estimate). */
  billedIfUnknown?: number;
  /** Deadline for the whole query (send, poll, page, retries); past it the job is cancelled. */
  timeoutMs: number;
  dryRun?: false;
  /**
   * Called when the query ends in WAREHOUSE_TIMEOUT (or its submission failed with an unknown outcome), with
   * what it billed once known: the job is cancelled, then `jobs.get` is polled until BigQuery reports it DONE
   * (cancel returns at once; the job bills later). The promise never rejects; `billedIfUnknown` (default 0)
   * when the bytes cannot be learned. It also runs in `deps.waitUntil`.
   */
  onLateBilling?: (bytesBilled: Promise<number>) => void;
}

export interface WarehouseClient {
  /** Validates `sql` and estimates bytes with a `jobs.insert` dry run (nothing runs, nothing is billed). */
  dryRun(sql: string, opts: DryRunOptions): Promise<DryRunResult>;
  /** Runs `sql` with `jobs.query`, polls and pages until `rowCap + 1` rows or the end. */
  query(sql: string, opts: QueryOptions): Promise<QueryResult>;
  /** Reads one page of a finished job's stored result: no new job, nothing billed. */
  readPage(opts: PageOptions): Promise<PageResult>;
  /** A table's metadata (`tables.get`): no job, nothing billed. */
  getTable(opts: TableOptions): Promise<TableInfo>;
  /** The tables of a dataset (`tables.list`, every page up to 10,000 tables): no job, nothing billed. */
  listTables(opts: DatasetOptions): Promise<TableListEntry[]>;
}

/** Seams for tests and the benchmark; every default is the real thing. */
export interface WarehouseClientDeps {
  /** Default: global `fetch`. */
  fetch?: typeof fetch;
  /** Clock in ms since the epoch, for deadlines and token lifetimes. Default: `Date.now`. */
  now?: () => number;
  /** Default: a `setTimeout` promise. */
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1). Default: `Math.random`. */
  random?: () => number;
  /** Overrides of DEFAULT_RETRY_POLICY (4 tries, 200 ms base, 3 s cap per wait, 6 s in all). */
  retry?: Partial<RetryPolicy>;
  /** Default: `createLogger(requestId)`. */
  logger?: (requestId: string) => Logger;
  /** Longest single `getQueryResults` long-poll. Default 10,000 ms (BigQuery's own default). */
  maxPollWaitMs?: number;
  /** Polls of one query at most (the deadline usually ends it first). Default 40. */
  maxPolls?: number;
  /**
   * Backoff between polls that came back incomplete at once (the long poll not honoured): equal jitter from
   * `base` doubling to `max`. Default 250 ms and 2,000 ms, so a stuck job is polled at most a few times a second.
   */
  pollBackoff?: { baseMs: number; maxMs: number };
  /** How long an HTTP call may outlive the deadline (network time on top of BigQuery's `timeoutMs`). Default 2,000 ms. */
  graceMs?: number;
  /** How long the best-effort `jobs.cancel` may take. Default 1,000 ms. */
  cancelTimeoutMs?: number;
  /** How long a cancelled job's `jobs.get` is polled for its final bytes billed (in `waitUntil`). Default 20,000 ms. */
  settleTimeoutMs?: number;
  /**
   * `jobTimeoutMs` sent with each job: the query's own deadline plus this, so BigQuery stops a job whose cancel was lost. Default 5,000 ms.
   */
  jobTimeoutMarginMs?: number;
  /**
   * Where the best-effort `jobs.cancel` after a deadline runs. In the Worker pass `ctx.waitUntil` so the 504
   * goes out at once and the cancel still completes; without it the cancel is awaited (bounded) before throwing.
   */
  waitUntil?: (p: Promise<unknown>) => void;
}

interface Call {
  /** The brand's account, looked up (from D1 or the secrets) on the first token the call needs. */
  account: () => Promise<ServiceAccount>;
  deadline: number;
  log: Logger;
  op: string;
  upstream: UpstreamContext;
  timeoutMs: number;
  /** Shared by every call of one logical operation (copies of a Call share it). */
  tally: Tally;
}

interface Tally {
  /** HTTP requests sent, retries included. */
  requests: number;
  /** The failure behind the last error `send` threw, to tell "refused" from "outcome unknown". */
  lastFailure: UpstreamFailure | null;
}

interface Request {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

interface SendPolicy {
  /** Resend after this failure? Default: whenever it is retryable. */
  retry?: (failure: UpstreamFailure) => boolean;
  /** A failure of a resend that means the first try succeeded (409 duplicate of our own job id): answered as `{}`. */
  accept?: (failure: UpstreamFailure, attempt: number) => boolean;
}

interface Sent {
  json: unknown;
  /** Length of the answer's text: a cheap upper bound of its rows' size. */
  bytes: number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Codes of errors about the query itself: BigQuery refused or failed it, and bills nothing for it. */
const QUERY_ERRORS = new Set(['QUERY_FAILED', 'QUERY_TOO_EXPENSIVE', 'FORBIDDEN_TABLE']);

/** Asks for TIMESTAMP as integer microseconds (lossless), as both official clients do. */
const INT64_TIMESTAMPS = { 'formatOptions.useInt64Timestamp': 'true' } as const;

export function createWarehouseClient(env: Env, deps: WarehouseClientDeps = {}): WarehouseClient {
  const base = `${env.BIGQUERY_API_BASE.replace(/\/+$/, '')}/bigquery/v2/projects/${encodeURIComponent(env.BIGQUERY_PROJECT)}`;
  const location = env.BIGQUERY_LOCATION || undefined;
  const fetchFn = deps.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? defaultSleep;
  const random = deps.random ?? Math.random;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...deps.retry };
  const makeLog = deps.logger ?? createLogger;
  const maxPollWaitMs = deps.maxPollWaitMs ?? 10_000;
  const graceMs = deps.graceMs ?? 2_000;
  const cancelTimeoutMs = deps.cancelTimeoutMs ?? 1_000;
  const settleTimeoutMs = deps.settleTimeoutMs ?? 20_000;
  const jobTimeoutMarginMs = deps.jobTimeoutMarginMs ?? 5_000;
  const maxPolls = deps.maxPolls ?? 40;
  const pollBackoff = deps.pollBackoff ?? { baseMs: 250, maxMs: 2_000 };
  const pollPolicy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: pollBackoff.baseMs, maxDelayMs: pollBackoff.maxMs };
  const decodeOpts = { int64Timestamps: true };

  function url(req: Request): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${base}${req.path}${qs ? `?${qs}` : ''}`;
  }

  async function token(call: Call): Promise<string> {
    const account = await call.account();
    try {
      return await bearerTokenFor(account, now());
    } catch (err) {
      throw new ApiError('INTERNAL', 'the warehouse credentials are misconfigured; quote the requestId to support', {
        internal: `signing the BigQuery token failed: ${describeError(err)}`,
      });
    }
  }

  /** One HTTP exchange; returns the text of a 2xx answer or the classified failure. */
  async function exchange(
    req: Request,
    call: Call,
    abortAfterMs: number,
  ): Promise<{ ok: true; text: string } | { ok: false; failure: UpstreamFailure; retryAfterMs?: number }> {
    const bearer = await token(call);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.max(1, abortAfterMs));
    call.tally.requests++;
    try {
      const res = await fetchFn(url(req), {
        method: req.method,
        headers: {
          authorization: `Bearer ${bearer}`,
          accept: 'application/json',
          ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: controller.signal,
      });
      const text = await res.text();
      if (res.ok) return { ok: true, text };
      return {
        ok: false,
        failure: mapUpstreamError(res.status, text, call.upstream),
        retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
      };
    } catch (err) {
      if (controller.signal.aborted) throw deadlineExceeded(call.timeoutMs, null);
      return { ok: false, failure: networkFailure(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `req` with retries (bounded, backoff + jitter, within the deadline) and returns the parsed JSON. */
  async function sendMeasured(req: Request, call: Call, sendPolicy: SendPolicy = {}): Promise<Sent> {
    let waitedMs = 0;
    call.tally.lastFailure = null;
    for (let attempt = 1; ; attempt++) {
      const remaining = call.deadline - now();
      if (remaining <= 0) throw deadlineExceeded(call.timeoutMs, null);
      const r = await exchange(req, call, remaining + graceMs);
      if (r.ok) {
        try {
          return { json: JSON.parse(r.text), bytes: r.text.length };
        } catch {
          throw malformedAnswer(`${call.op}: not JSON`, r.text);
        }
      }
      const { failure } = r;
      if (sendPolicy.accept?.(failure, attempt)) return { json: {}, bytes: 0 };
      call.tally.lastFailure = failure;
      const retry = sendPolicy.retry ? sendPolicy.retry(failure) : failure.retryable;
      if (!retry) throw failure.error;
      const delay = nextRetryDelay(policy, { attempt, waitedMs, remainingMs: call.deadline - now(), retryAfterMs: r.retryAfterMs }, random);
      if (delay === null) {
        call.log.warn('warehouse call gave up', {
          op: call.op,
          attempts: attempt,
          code: failure.error.code,
          upstream: failure.error.internal,
        });
        throw failure.error;
      }
      call.log.warn('warehouse call failed, retrying', { op: call.op, attempt, delayMs: delay, upstream: failure.error.internal });
      await sleep(delay);
      waitedMs += delay;
    }
  }

  async function send(req: Request, call: Call, sendPolicy?: SendPolicy): Promise<unknown> {
    return (await sendMeasured(req, call, sendPolicy)).json;
  }

  function newCall(opts: CallOptions, op: string, timeoutMs: number, upstream: UpstreamContext = {}): Call {
    let account: Promise<ServiceAccount> | undefined;
    return {
      account: () => (account ??= credentialFor(env, opts.brandId, now())),
      deadline: now() + timeoutMs,
      log: makeLog(opts.requestId),
      op,
      upstream: { ...upstream, dataset: opts.dataset === undefined ? undefined : { project: env.BIGQUERY_PROJECT, dataset: opts.dataset } },
      timeoutMs,
      tally: { requests: 0, lastFailure: null },
    };
  }

  function parseQueryResponse(json: unknown, op: string): QueryResponse {
    const r = QueryResponseSchema.safeParse(json);
    if (!r.success) throw malformedAnswer(`${op}: ${r.error.issues.map((i) => i.path.join('.')).join(', ')}`, JSON.stringify(json));
    return r.data;
  }

  /** Best effort: a job we stop waiting for should stop billing. Failures are logged, never thrown. */
  async function cancel(jobId: string, jobLocation: string | undefined, call: Call): Promise<void> {
    const cancelCall: Call = { ...call, op: 'jobs.cancel', deadline: now() + cancelTimeoutMs };
    try {
      const r = await exchange(
        { method: 'POST', path: `/jobs/${encodeURIComponent(jobId)}/cancel`, query: { location: jobLocation } },
        cancelCall,
        cancelTimeoutMs,
      );
      if (r.ok) call.log.info('warehouse job cancel requested', { jobId });
      else call.log.warn('warehouse job cancel failed', { jobId, upstream: r.failure.error.internal });
    } catch (err) {
      const timedOut = err instanceof ApiError && err.code === 'WAREHOUSE_TIMEOUT';
      call.log.warn('warehouse job cancel failed', {
        jobId,
        error: timedOut ? `no answer within ${cancelTimeoutMs} ms` : describeError(err),
      });
    }
  }

  /** `getQueryResults` doesn't report bytes billed; the job does. Falls back to bytes processed if it can't. */
  async function bytesBilled(jobId: string, jobLocation: string | undefined, call: Call, fallback: number): Promise<number> {
    try {
      const job = JobSchema.safeParse(
        await send(
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
  async function settleAbandoned(jobId: string, jobLocation: string | undefined, call: Call, fallback: number): Promise<number> {
    await cancel(jobId, jobLocation, call);
    const until = now() + settleTimeoutMs;
    for (let attempt = 1; ; attempt++) {
      const getCall: Call = {
        ...call,
        op: 'jobs.get(settle)',
        deadline: Math.min(until, now() + cancelTimeoutMs * 2),
        timeoutMs: cancelTimeoutMs * 2,
      };
      try {
        const job = JobSchema.safeParse(
          await send({ method: 'GET', path: `/jobs/${encodeURIComponent(jobId)}`, query: { location: jobLocation } }, getCall),
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
      const pause = backoffDelay(pollPolicy, attempt, random);
      if (now() + pause >= until) break;
      await sleep(pause);
    }
    call.log.warn('could not learn what an abandoned job billed; counting the estimate', { jobId, bytes: fallback });
    return fallback;
  }

  /** Reports `late` to the caller and keeps it running past the answer (or awaits it without waitUntil). */
  async function reportLate(late: Promise<number>, opts: QueryOptions): Promise<void> {
    opts.onLateBilling?.(late);
    if (deps.waitUntil) deps.waitUntil(late);
    else await late;
  }

  function jobTimeoutMs(timeoutMs: number): string {
    return String(timeoutMs + jobTimeoutMarginMs);
  }

  /**
   * Rows of `page` kept within the byte budget. A page whose whole answer fits is kept without measuring; one that
   * crosses the budget is measured row by row (raw JSON size) and cut, at least one row overall.
   */
  function withinBudget(pageRows: unknown[], pageBytes: number, budget: { left: number; hit: boolean; kept: number }): unknown[] {
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

  async function runQuery(sql: string, opts: QueryOptions): Promise<QueryResult> {
    const call = newCall(opts, opts.requireJob ? 'jobs.insert' : 'jobs.query', opts.timeoutMs, { maxBytesBilled: opts.maxBytesBilled });
    const rowCap = opts.rowCap;
    const labels = sanitizeLabels(opts.labels);
    let jobId: string | null = null;
    let jobLocation = location;
    // Where the query stands when an error ends it: nothing sent yet, submission outcome unknown, or known.
    let phase: 'submit' | 'job' = 'submit';
    // What a job-less answer said it billed, so an error after it (an unreadable cell) still counts the bytes.
    let knownBilled: number | null = null;
    let firstBytes = 0;
    try {
      let first: QueryResponse;
      if (opts.requireJob) {
        // Idempotent by a client-chosen job id: a resend after a lost answer meets 409 duplicate (our own job),
        // never a second job, and the id is known even when no answer came, so the job can be cancelled and billed.
        jobId = `wqa_${crypto.randomUUID().replaceAll('-', '')}`;
        const inserted = JobSchema.safeParse(
          await send(
            {
              method: 'POST',
              path: '/jobs',
              body: {
                jobReference: { projectId: env.BIGQUERY_PROJECT, jobId, location },
                configuration: {
                  labels,
                  jobTimeoutMs: jobTimeoutMs(opts.timeoutMs),
                  query: { query: sql, useLegacySql: false, maximumBytesBilled: String(opts.maxBytesBilled) },
                },
              },
            },
            call,
            { accept: (f, attempt) => attempt > 1 && f.status === 409 && f.reasons.includes('duplicate') },
          ),
        );
        jobLocation = (inserted.success ? inserted.data.jobReference?.location : undefined) ?? location;
        phase = 'job';
        first = { jobComplete: false };
      } else {
        // The fast path (jobs.query, JOB_CREATION_OPTIONAL): a short query answers in this one request, without
        // a job. BigQuery may ignore `requestId` for read-only queries, so this request is resent only after a
        // refusal (429, rateLimitExceeded): after any other failure it may have run, and a resend could run it
        // again. See docs/warehouse-client.md, "Which path, when".
        const sent = await sendMeasured(
          {
            method: 'POST',
            path: '/queries',
            body: {
              query: sql,
              useLegacySql: false,
              maximumBytesBilled: String(opts.maxBytesBilled),
              maxResults: rowCap,
              timeoutMs: Math.max(0, call.deadline - now()),
              jobTimeoutMs: jobTimeoutMs(opts.timeoutMs),
              jobCreationMode: 'JOB_CREATION_OPTIONAL',
              formatOptions: { useInt64Timestamp: true },
              location,
              labels,
              requestId: crypto.randomUUID(),
            },
          },
          call,
          { retry: (f) => f.retryable && f.refused },
        );
        first = parseQueryResponse(sent.json, 'jobs.query');
        firstBytes = sent.bytes;
        knownBilled = first.totalBytesBilled ?? null;
        jobId = first.jobReference?.jobId ?? null;
        jobLocation = first.jobReference?.location ?? location;
        phase = 'job';
      }
      const resultsPath = jobId ? `/queries/${encodeURIComponent(jobId)}` : null;

      // Long poll: BigQuery holds each getQueryResults up to `timeoutMs`. An answer that comes back incomplete
      // at once (a warehouse not honouring the wait) is followed by a jittered, growing pause, and the polls of
      // one query are capped, so a stuck job cannot turn into a flood of requests.
      let polls = 0;
      let quick = 0;
      while (!first.jobComplete) {
        if (!resultsPath) throw malformedAnswer('jobs.query: incomplete job without jobReference', '');
        const remaining = call.deadline - now();
        if (remaining <= 0) throw deadlineExceeded(opts.timeoutMs, jobId);
        if (polls >= maxPolls) throw deadlineExceeded(opts.timeoutMs, jobId, `still running after ${polls} polls`);
        const waitMs = Math.min(remaining, maxPollWaitMs);
        const asked = now();
        const sent = await sendMeasured(
          {
            method: 'GET',
            path: resultsPath,
            query: { location: jobLocation, maxResults: rowCap, timeoutMs: waitMs, ...INT64_TIMESTAMPS },
          },
          { ...call, op: 'jobs.getQueryResults' },
        );
        first = parseQueryResponse(sent.json, 'jobs.getQueryResults');
        firstBytes = sent.bytes;
        polls++;
        if (!first.jobComplete && now() - asked < waitMs / 2) {
          quick++;
          await sleep(Math.max(0, Math.min(backoffDelay(pollPolicy, quick, random), call.deadline - now())));
        }
      }

      const schema = first.schema?.fields ?? [];
      const budget = { left: opts.maxResultBytes ?? Infinity, hit: false, kept: 0 };
      const firstRows = first.rows ?? [];
      const rows = decodeRows(schema, withinBudget(firstRows, firstBytes, budget).slice(0, rowCap), decodeOpts);
      let pageToken = first.pageToken;
      while (rows.length < rowCap && pageToken && resultsPath && !budget.hit) {
        if (call.deadline - now() <= 0) throw deadlineExceeded(opts.timeoutMs, jobId);
        const sent = await sendMeasured(
          {
            method: 'GET',
            path: resultsPath,
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

      const totalBytesProcessed = first.totalBytesProcessed ?? 0;
      const totalRows = Math.max(first.totalRows ?? 0, rows.length);
      if (!jobId && rows.length < totalRows) {
        // A job-less answer cut by the byte budget: a cursor needs a job. Run it again as one; the first run put
        // its result in the query cache, so this one bills nothing (BigQuery: cached results are not charged).
        call.log.info('job-less result cut by the byte budget; running it as a job for a cursor', { rows: rows.length, totalRows });
        const again = await runQuery(sql, { ...opts, requireJob: true, timeoutMs: Math.max(1, call.deadline - now()) });
        return {
          ...again,
          totalBytesBilled: again.totalBytesBilled + (first.totalBytesBilled ?? totalBytesProcessed),
          requests: again.requests + call.tally.requests,
        };
      }
      const totalBytesBilled =
        first.totalBytesBilled ?? (jobId ? await bytesBilled(jobId, jobLocation, call, totalBytesProcessed) : totalBytesProcessed);
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
      if (!(err instanceof ApiError) || QUERY_ERRORS.has(err.code)) throw err;
      const unknown = opts.billedIfUnknown ?? 0;
      if (jobId === null && knownBilled !== null) {
        await reportLate(Promise.resolve(knownBilled), opts);
      } else if (jobId !== null) {
        // A job we know of and no longer wait for (deadline, or a failure while polling): stop it, count it.
        await reportLate(settleAbandoned(jobId, jobLocation, call, unknown), opts);
      } else if (
        phase === 'submit' &&
        !call.tally.lastFailure?.refused &&
        !(call.tally.lastFailure && call.tally.lastFailure.status >= 400 && call.tally.lastFailure.status < 500)
      ) {
        // The submission's outcome is unknown (no answer, 5xx, a dropped connection): it may have run, and there
        // is no job id to find it by. jobTimeoutMs stops it; its bytes are counted at the estimate.
        call.log.warn('query submission outcome unknown; counting the estimate', { bytes: unknown, code: err.code });
        await reportLate(Promise.resolve(unknown), opts);
      }
      // The message must match what happened: a cancel is only requested for a job we know.
      const said = (err.internal as { jobId?: string | null } | undefined)?.jobId ?? null;
      if (err.code === 'WAREHOUSE_TIMEOUT' && said !== jobId) throw deadlineExceeded(opts.timeoutMs, jobId);
      throw err;
    }
  }

  return {
    async dryRun(sql, opts) {
      const timeoutMs = opts.timeoutMs ?? configOf(env).QUERY_TIMEOUT_MS;
      const call = newCall(opts, 'jobs.insert(dryRun)', timeoutMs, { maxBytesBilled: opts.maxBytesBilled });
      const json = await send(
        {
          method: 'POST',
          path: '/jobs',
          body: {
            jobReference: { projectId: env.BIGQUERY_PROJECT, location },
            configuration: {
              dryRun: true,
              labels: sanitizeLabels(opts.labels),
              query: {
                query: sql,
                useLegacySql: false,
                // A dry run answered from the cache may omit referencedTables ("only populated for query jobs that
                // are not cache hits"), which would empty the gate's table check; Google's own dry-run sample
                // sets use_query_cache=False too.
                useQueryCache: false,
                ...(opts.maxBytesBilled === undefined ? {} : { maximumBytesBilled: String(opts.maxBytesBilled) }),
              },
            },
          },
        },
        call,
      );
      const job = JobSchema.safeParse(json);
      const q = job.success ? job.data.statistics?.query : undefined;
      if (!job.success || !q?.statementType) {
        throw malformedAnswer('jobs.insert(dryRun): no statistics.query.statementType', JSON.stringify(json));
      }
      return {
        statementType: q.statementType,
        referencedTables: q.referencedTables ?? [],
        referencedRoutines: q.referencedRoutines ?? [],
        otherReferences: otherReferences(json),
        cacheHit: q.cacheHit === true,
        totalBytesProcessed: q.totalBytesProcessed ?? job.data.statistics?.totalBytesProcessed ?? 0,
      };
    },

    query: runQuery,

    async readPage(opts) {
      const timeoutMs = opts.timeoutMs ?? configOf(env).QUERY_TIMEOUT_MS;
      const call = newCall(opts, 'jobs.getQueryResults(cursor)', timeoutMs, { readsStoredResult: true });
      const sent = await sendMeasured(
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
    },

    getTable,
    listTables,
  };

  async function getTable(opts: TableOptions): Promise<TableInfo> {
    const timeoutMs = opts.timeoutMs ?? configOf(env).QUERY_TIMEOUT_MS;
    const call = newCall(opts, 'tables.get', timeoutMs);
    const path = `/datasets/${encodeURIComponent(opts.dataset)}/tables/${encodeURIComponent(opts.table)}`;
    const json = await send({ method: 'GET', path }, call);
    const parsed = TableResourceSchema.safeParse(json);
    if (!parsed.success)
      throw malformedAnswer(`tables.get: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`, JSON.stringify(json));
    const t = parsed.data;
    return {
      schema: t.schema?.fields ?? [],
      description: t.description ?? null,
      numRows: t.numRows ?? null,
      numBytes: t.numBytes ?? null,
      labels: t.labels ?? {},
      type: t.type ?? null,
      lastModifiedTime: t.lastModifiedTime ?? null,
    };
  }

  async function listTables(opts: DatasetOptions): Promise<TableListEntry[]> {
    const call = newCall(opts, 'tables.list', opts.timeoutMs ?? configOf(env).QUERY_TIMEOUT_MS);
    const path = `/datasets/${encodeURIComponent(opts.dataset)}/tables`;
    const out: TableListEntry[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < MAX_TABLE_LIST_PAGES; page++) {
      const json = await send({ method: 'GET', path, query: { maxResults: 1000, pageToken } }, call);
      const parsed = TableListSchema.safeParse(json);
      if (!parsed.success)
        throw malformedAnswer(`tables.list: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`, JSON.stringify(json));
      for (const t of parsed.data.tables) out.push({ table: t.tableReference.tableId, type: t.type ?? null, labels: t.labels ?? {} });
      pageToken = parsed.data.nextPageToken;
      if (pageToken === undefined) return out;
    }
    call.log.warn('tables.list: more pages than read', { dataset: opts.dataset, tables: out.length });
    return out;
  }
}

/** The `referenced*` entries of a dry run's `statistics.query` other than tables and routines, unparsed. */
function otherReferences(json: unknown): Record<string, unknown> {
  const parsed = DryRunQueryStatisticsSchema.safeParse(json);
  if (!parsed.success) return {};
  return Object.fromEntries(
    Object.entries(parsed.data.statistics.query).filter(
      ([key]) => key.startsWith('referenced') && key !== 'referencedTables' && key !== 'referencedRoutines',
    ),
  );
}
