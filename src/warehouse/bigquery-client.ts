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
  /** Rows kept; one more is asked for to know whether the result was cut. */
  rowCap: number;
  /** Deadline for the whole query (send, poll, page, retries); past it the job is cancelled. */
  timeoutMs: number;
  dryRun?: false;
  /**
   * Called when the query ends in WAREHOUSE_TIMEOUT, with what the abandoned job billed, once known (found by
   * job id, or by re-sending the same BigQuery requestId when the submission itself went unanswered). The
   * promise never rejects (0 when it cannot be learned); it also runs in `deps.waitUntil`.
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
  /**
   * Where the best-effort `jobs.cancel` after a deadline runs. In the Worker pass `ctx.waitUntil` so the 504
   * goes out at once and the cancel still completes; without it the cancel is awaited (bounded) before throwing.
   */
  waitUntil?: (p: Promise<unknown>) => void;
}

interface Call {
  account: ServiceAccount;
  deadline: number;
  log: Logger;
  op: string;
  upstream: UpstreamContext;
  timeoutMs: number;
}

interface Request {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
  const maxPolls = deps.maxPolls ?? 40;
  const pollBackoff = deps.pollBackoff ?? { baseMs: 250, maxMs: 2_000 };

  function url(req: Request): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${base}${req.path}${qs ? `?${qs}` : ''}`;
  }

  async function token(call: Call): Promise<string> {
    try {
      return await bearerTokenFor(call.account, now());
    } catch (err) {
      throw new ApiError('INTERNAL', 'the warehouse credentials are misconfigured; quote the requestId to support', {
        internal: `signing the BigQuery token failed: ${describeError(err)}`,
      });
    }
  }

  /** One HTTP exchange; returns the text of a 2xx answer or the classified failure. */
  async function exchange(req: Request, call: Call, abortAfterMs: number): Promise<{ ok: true; text: string } | { ok: false; failure: UpstreamFailure; retryAfterMs?: number }> {
    const bearer = await token(call);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.max(1, abortAfterMs));
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
  async function send(req: Request, call: Call): Promise<unknown> {
    let waitedMs = 0;
    for (let attempt = 1; ; attempt++) {
      const remaining = call.deadline - now();
      if (remaining <= 0) throw deadlineExceeded(call.timeoutMs, null);
      const r = await exchange(req, call, remaining + graceMs);
      if (r.ok) {
        try {
          return JSON.parse(r.text);
        } catch {
          throw malformedAnswer(`${call.op}: not JSON`, r.text);
        }
      }
      const { failure } = r;
      if (!failure.retryable) throw failure.error;
      const delay = nextRetryDelay(policy, { attempt, waitedMs, remainingMs: call.deadline - now(), retryAfterMs: r.retryAfterMs }, random);
      if (delay === null) {
        call.log.warn('warehouse call gave up', { op: call.op, attempts: attempt, code: failure.error.code, upstream: failure.error.internal });
        throw failure.error;
      }
      call.log.warn('warehouse call failed, retrying', { op: call.op, attempt, delayMs: delay, upstream: failure.error.internal });
      await sleep(delay);
      waitedMs += delay;
    }
  }

  function newCall(opts: CallOptions, op: string, timeoutMs: number, upstream: UpstreamContext = {}): Call {
    return {
      account: credentialFor(env, opts.brandId),
      deadline: now() + timeoutMs,
      log: makeLog(opts.requestId),
      op,
      upstream: { ...upstream, dataset: opts.dataset === undefined ? undefined : { project: env.BIGQUERY_PROJECT, dataset: opts.dataset } },
      timeoutMs,
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
      if (r.ok) call.log.info('warehouse job cancelled after deadline', { jobId });
      else call.log.warn('warehouse job cancel failed', { jobId, upstream: r.failure.error.internal });
    } catch (err) {
      const timedOut = err instanceof ApiError && err.code === 'WAREHOUSE_TIMEOUT';
      call.log.warn('warehouse job cancel failed', { jobId, error: timedOut ? `no answer within ${cancelTimeoutMs} ms` : describeError(err) });
    }
  }

  /** `getQueryResults` doesn't report bytes billed; the job does. Falls back to bytes processed if it can't. */
  async function bytesBilled(jobId: string, jobLocation: string | undefined, call: Call, fallback: number): Promise<number> {
    try {
      const job = JobSchema.safeParse(
        await send({ method: 'GET', path: `/jobs/${encodeURIComponent(jobId)}`, query: { location: jobLocation } }, { ...call, op: 'jobs.get' }),
      );
      const billed = job.success ? job.data.statistics?.query?.totalBytesBilled : undefined;
      if (billed !== undefined) return billed;
      call.log.warn('jobs.get had no totalBytesBilled; counting bytes processed', { jobId });
    } catch (err) {
      // The rows are already in hand: a failed lookup costs accuracy of the usage count, not the answer.
      call.log.warn('jobs.get failed; counting bytes processed', { jobId, error: describeError(err), upstream: err instanceof ApiError ? err.internal : undefined });
    }
    return fallback;
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
        totalBytesProcessed: q.totalBytesProcessed ?? job.data.statistics?.totalBytesProcessed ?? 0,
      };
    },

    async query(sql, opts) {
      const call = newCall(opts, 'jobs.query', opts.timeoutMs, { maxBytesBilled: opts.maxBytesBilled });
      const want = opts.rowCap + 1;
      // One id per logical query, reused by every retry, so BigQuery runs (and bills) it at most once.
      const bigqueryRequestId = crypto.randomUUID();
      const submit = (timeoutMs: number, maxResults: number): Request => ({
        method: 'POST',
        path: '/queries',
        body: {
          query: sql,
          useLegacySql: false,
          maximumBytesBilled: String(opts.maxBytesBilled),
          maxResults,
          timeoutMs,
          location,
          labels: sanitizeLabels(opts.labels),
          requestId: bigqueryRequestId,
        },
      });
      let jobId: string | null = null;
      let jobLocation = location;
      try {
        let first = parseQueryResponse(await send(submit(Math.max(0, call.deadline - now()), want), call), 'jobs.query');
        jobId = first.jobReference?.jobId ?? null;
        jobLocation = first.jobReference?.location ?? location;
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
          first = parseQueryResponse(
            await send(
              { method: 'GET', path: resultsPath, query: { location: jobLocation, maxResults: want, timeoutMs: waitMs } },
              { ...call, op: 'jobs.getQueryResults' },
            ),
            'jobs.getQueryResults',
          );
          polls++;
          if (!first.jobComplete && now() - asked < waitMs / 2) {
            quick++;
            const pause = backoffDelay({ ...DEFAULT_RETRY_POLICY, baseDelayMs: pollBackoff.baseMs, maxDelayMs: pollBackoff.maxMs }, quick, random);
            await sleep(Math.max(0, Math.min(pause, call.deadline - now())));
          }
        }

        const schema = first.schema?.fields ?? [];
        const rows = decodeRows(schema, first.rows ?? []);
        let pageToken = first.pageToken;
        while (rows.length < want && pageToken && resultsPath) {
          if (call.deadline - now() <= 0) throw deadlineExceeded(opts.timeoutMs, jobId);
          const page = parseQueryResponse(
            await send(
              {
                method: 'GET',
                path: resultsPath,
                query: { location: jobLocation, pageToken, maxResults: want - rows.length },
              },
              { ...call, op: 'jobs.getQueryResults(page)' },
            ),
            'jobs.getQueryResults(page)',
          );
          const pageRows = page.rows ?? [];
          // A page without rows and with the same token again would loop forever.
          if (pageRows.length === 0 && page.pageToken === pageToken) break;
          for (const row of decodeRows(schema, pageRows)) rows.push(row);
          pageToken = page.pageToken;
        }

        const totalBytesProcessed = first.totalBytesProcessed ?? 0;
        const totalBytesBilled =
          first.totalBytesBilled ?? (jobId ? await bytesBilled(jobId, jobLocation, call, totalBytesProcessed) : totalBytesProcessed);
        const totalRows = Math.max(first.totalRows ?? 0, rows.length);
        const truncated = rows.length > opts.rowCap || totalRows > opts.rowCap;
        if (rows.length > opts.rowCap) rows.length = opts.rowCap;
        return { rows, schema, truncated, totalRows, totalBytesProcessed, totalBytesBilled, jobId, location: jobLocation ?? null };
      } catch (err) {
        if (err instanceof ApiError && err.code === 'WAREHOUSE_TIMEOUT') {
          const knownJob = jobId;
          const late = abandon(knownJob, jobLocation, call, () => send(submit(0, 1), { ...call, op: 'jobs.query(recover)', deadline: now() + cancelTimeoutMs * 5 }));
          opts.onLateBilling?.(late);
          if (deps.waitUntil) deps.waitUntil(late);
          else await late;
          // The message must match what happened: a cancel is only requested for a job we know.
          if (knownJob === null) throw deadlineExceeded(opts.timeoutMs, null);
        }
        throw err;
      }
    },

    async readPage(opts) {
      const timeoutMs = opts.timeoutMs ?? configOf(env).QUERY_TIMEOUT_MS;
      const call = newCall(opts, 'jobs.getQueryResults(cursor)', timeoutMs, { readsStoredResult: true });
      const page = parseQueryResponse(
        await send(
          {
            method: 'GET',
            path: `/queries/${encodeURIComponent(opts.jobId)}`,
            query: { location: opts.location, startIndex: opts.startIndex, maxResults: opts.maxResults, timeoutMs: 0 },
          },
          call,
        ),
        'jobs.getQueryResults(cursor)',
      );
      // A cursor is only issued for a finished job, so an incomplete answer means the warehouse lost track of it.
      if (!page.jobComplete) throw malformedAnswer('jobs.getQueryResults(cursor): job of a cursor is not complete', '');
      const schema = page.schema?.fields ?? [];
      const rows = decodeRows(schema, page.rows ?? []);
      if (rows.length > opts.maxResults) rows.length = opts.maxResults;
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
    if (!parsed.success) throw malformedAnswer(`tables.get: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`, JSON.stringify(json));
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
      if (!parsed.success) throw malformedAnswer(`tables.list: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`, JSON.stringify(json));
      for (const t of parsed.data.tables) out.push({ table: t.tableReference.tableId, type: t.type ?? null, labels: t.labels ?? {} });
      pageToken = parsed.data.nextPageToken;
      if (pageToken === undefined) return out;
    }
    call.log.warn('tables.list: more pages than read', { dataset: opts.dataset, tables: out.length });
    return out;
  }

  /**
   * After a deadline: cancel the job (best effort) and learn what it billed, so the usage budget still counts it.
   * Without a job id (the submission went unanswered) the same requestId is sent again with no wait: BigQuery
   * answers the job it already started (or starts it, which the cancel then stops). Never rejects: 0 when unknown.
   */
  async function abandon(jobId: string | null, jobLocation: string | undefined, call: Call, resubmit: () => Promise<unknown>): Promise<number> {
    let id = jobId;
    let where = jobLocation;
    try {
      if (id === null) {
        const again = QueryResponseSchema.safeParse(await resubmit());
        id = again.success ? (again.data.jobReference?.jobId ?? null) : null;
        where = again.success ? (again.data.jobReference?.location ?? where) : where;
        if (id === null) return 0;
        call.log.info('warehouse job found after the deadline', { jobId: id });
      }
      await cancel(id, where, call);
      return await bytesBilled(id, where, { ...call, deadline: now() + cancelTimeoutMs * 2 }, 0);
    } catch (err) {
      call.log.warn('could not learn what an abandoned job billed; counting 0', { jobId: id, error: describeError(err) });
      return 0;
    }
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
