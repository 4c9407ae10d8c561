import type { Logger } from '../lib/log';
import type { RetryPolicy } from './retry';
import type { FieldSchema, TableFieldSchema } from './wire';

/**
 * The BigQuery client's types: what it is asked (options) and what it answers (results), and its seams. Its own
 * file so that the client (bigquery-client.ts) and the parts it is made of (transport.ts, query-job.ts,
 * metadata.ts) all import them from below, not from each other.
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

export interface CallOptions {
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

/** What submitting a query job needs: the byte ceiling, the deadline, and how its bill is settled if it fails. */
export interface JobOptions extends CallOptions {
  /**
   * The job id to submit under (`submitJob`): a long query records it before the job is sent, so a lost answer
   * cannot lose the job. Default: a fresh client-chosen id.
   */
  jobId?: string;
  /** Per-key byte-scan ceiling, sent as `maximumBytesBilled` so BigQuery enforces it too. */
  maxBytesBilled: number;
  /** Deadline for the whole call (send, poll, page, retries); past it the job is cancelled. */
  timeoutMs: number;
  /** `jobTimeoutMs` sent to BigQuery: the job's own longest run. Default: `timeoutMs` + `deps.jobTimeoutMarginMs`. */
  jobTimeoutMs?: number;
  /** Tables the dry run listed: BigQuery bills at least 10 MB per table, counted when a job does not say. Default 1. */
  tables?: number;
  /** Bytes to count when what a timed-out or lost query billed can never be learned (the dry-run estimate). */
  billedIfUnknown?: number;
  /**
   * Called when the query ends in an error after it may have billed (a deadline, a failure while polling, a
   * submission whose outcome is unknown), with what it billed once known: a job is cancelled, then `jobs.get` is
   * polled until BigQuery reports it DONE (cancel returns at once; the job bills later). Called once per execution
   * that may have billed (twice when a fast path of unknown outcome and its client-id fallback both fail); the
   * promise never rejects; `billedIfUnknown` (default 0) when the bytes cannot be learned. It also runs
   * in `deps.waitUntil`. The caller adds it to the bytes of a success, never replaces them.
   */
  onLateBilling?: (bytesBilled: Promise<number>) => void;
}

export interface QueryOptions extends JobOptions {
  /** Rows kept at most; whether more exist comes from BigQuery's `totalRows`. */
  rowCap: number;
  /**
   * Byte budget of the rows kept (their JSON size as BigQuery sent them, which is larger than the decoded rows):
   * pages stop being fetched once it is reached and the rest is left to a cursor. A job-less answer (which no cursor
   * could continue, and which is already held) is never cut. Default: no budget.
   */
  maxResultBytes?: number;
  /**
   * The caller may cut the answer (a transport's own size limit) and continue it with a cursor: ask BigQuery to keep
   * a job (`jobs.query` with JOB_CREATION_REQUIRED), still one round trip, so the cursor reads the same execution.
   */
  keepJob?: boolean;
  /** Submit as a job with a client-chosen id (`jobs.insert` + `getQueryResults` + `jobs.get`) instead of `jobs.query`. */
  requireJob?: boolean;
  /**
   * `query`: past `timeoutMs` with the job still running, do not cancel it: throw `JobStillRunning` with its
   * reference, for a caller that keeps watching it (a plain MCP run_query becoming a long query); other failures are
   * handled as usual. `awaitJob`: no failure touches the job (its owner decides).
   */
  leaveRunning?: boolean;
  /**
   * The caller asks the job for its bytes itself (a long query's record reads `jobs.get` right after): skip the
   * `jobs.get` an answer without `totalBytesBilled` would take; the result's bytes are then only what the answer said.
   */
  bytesAskedElsewhere?: boolean;
  dryRun?: false;
}

/** A query job BigQuery keeps: the id (ours for `submitJob`) and where it runs; what `awaitJob` and a cursor need. */
export interface JobRef {
  jobId: string;
  location: string | null;
}

/** Where a job stands (`jobs.get`). */
export interface JobState {
  state: 'PENDING' | 'RUNNING' | 'DONE';
  /** Bytes processed so far (BigQuery reports them once the job is DONE; 0 before). */
  totalBytesProcessed: number;
  /** What the job billed, once DONE (BigQuery's, else its processed bytes at the minimums); null before. */
  totalBytesBilled: number | null;
  /** A DONE job's failure (`status.errorResult`), e.g. reason `stopped` after a cancel. */
  error: { reason: string | null; message: string | null } | null;
}

export interface WarehouseClient {
  /** Validates `sql` and estimates bytes with a `jobs.insert` dry run (nothing runs, nothing is billed). */
  dryRun(sql: string, opts: DryRunOptions): Promise<DryRunResult>;
  /** Runs `sql` once (`jobs.query`, or `jobs.insert` with `requireJob`), polls and pages up to `rowCap` rows. */
  query(sql: string, opts: QueryOptions): Promise<QueryResult>;
  /**
   * Submits `sql` as a job with a client-chosen id (`jobs.insert`, safe to resend) and returns its reference as soon
   * as BigQuery has it; the job may still run. For runs that outlive one request (`awaitJob`, `jobStatus`, `cancelJob`).
   */
  submitJob(sql: string, opts: JobOptions): Promise<JobRef>;
  /**
   * Waits for a submitted job within `opts.timeoutMs` and answers as `query` does. Past the deadline: 504
   * WAREHOUSE_TIMEOUT, and the job is cancelled and settled, unless `leaveRunning`: then no failure touches the job.
   */
  awaitJob(job: JobRef, opts: QueryOptions): Promise<QueryResult>;
  /** Where a job stands: one `jobs.get`. */
  jobStatus(job: JobRef, opts: CallOptions & { timeoutMs?: number }): Promise<JobState>;
  /** Cancels a job and polls it until DONE (at most `settleTimeoutMs`): what it billed. Never rejects. */
  cancelJob(job: JobRef, opts: CallOptions & { billedIfUnknown?: number }): Promise<number>;
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
  /** Overrides of DEFAULT_RETRY_POLICY (6 tries, 1 s base, 32 s cap per wait, 60 s in all, within the deadline). */
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
