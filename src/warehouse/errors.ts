import { ApiError, describeError } from '../errors';
import { GoogleErrorSchema } from './wire';

/**
 * Pure mapping of BigQuery's answers to the service's errors, and whether a failure is worth retrying.
 * What goes on the wire: BigQuery's own message only when it is about the user's SQL (invalidQuery and its
 * kin); everything else gets a fixed message. The raw upstream body always goes to `internal` (the log).
 */

export interface UpstreamFailure {
  /** Worth another try: 5xx, 429, backendError, internalError, rateLimitExceeded. Never a user error. */
  retryable: boolean;
  /**
   * BigQuery refused the request before doing anything (429, `rateLimitExceeded`, `quotaExceeded`): resending a
   * query that got this cannot run it twice. False when the outcome is unknown (5xx, a dropped connection).
   */
  refused: boolean;
  /** HTTP status (0 for a network failure) and the error reasons, for callers that treat one specially. */
  status: number;
  reasons: string[];
  error: ApiError;
}

/**
 * What a caller is told to wait after `quotaExceeded`: quotas reset over minutes (concurrent queries, API
 * requests) to a day (daily bytes), so the short wait of a transient outage would only repeat the refusal.
 */
export const QUOTA_RETRY_AFTER_SECONDS = 600;

/** Largest slice of an upstream body kept for the log. */
const MAX_LOGGED_BODY = 4096;

/**
 * Reasons worth resending the same request for. The `job*` reasons are not among them: they report a job that
 * already failed (getQueryResults turns a job failure into an HTTP error), so resending only repeats the failure
 * (python-bigquery retry.py, job_retry_reasons).
 */
const RETRYABLE_REASONS = new Set(['backendError', 'internalError', 'rateLimitExceeded']);
/** Reasons that mean the request was refused before anything ran. */
const REFUSED_REASONS = new Set(['rateLimitExceeded', 'quotaExceeded']);
/** Reasons whose message describes the user's own query, so it may be returned. */
const USER_QUERY_REASONS = new Set(['invalidQuery', 'resourcesExceeded', 'responseTooLarge']);
/** A message about a table, view or dataset (as opposed to the project, a job or our credentials). */
const OBJECT_REF_RE = /\b(?:Table|Dataset|View|Routine|Function)\s+([\w.:`-]+)/i;
const LINE_COL_RE = /\[(\d+):(\d+)\]/;
const REQUIRED_BYTES_RE = /(\d+) or higher required/;

function logged(status: number, rawText: string): { status: number; body: string } {
  return { status, body: rawText.slice(0, MAX_LOGGED_BODY) };
}

function parseBody(rawText: string): unknown {
  try {
    return JSON.parse(rawText);
  } catch {
    return null;
  }
}

/** What the caller knows about the call, so an answer can be worded for it. */
export interface UpstreamContext {
  /** The per-query ceiling that was sent. */
  maxBytesBilled?: number;
  /** `<project>.<dataset>` the query was confined to (the brand's own dataset). */
  dataset?: { project: string; dataset: string };
  /** The call read a stored result by job id (a cursor page): a missing job means the result is gone. */
  readsStoredResult?: boolean;
}

/** `service-v1:acme.orders` or `service-v1.acme.orders` (BigQuery writes both) as its parts. */
const TABLE_PATH_RE = /^([\w-]+)[:.]([\w]+)\.([\w$-]+)$/;

/** The table a notFound message names, when it lies inside `dataset`; null otherwise. */
function missingOwnTable(message: string, dataset: UpstreamContext['dataset']): string | null {
  if (!dataset || !/^Not found: (?:Table|View)\b/i.test(message)) return null;
  const ref = OBJECT_REF_RE.exec(message)?.[1]?.replace(/[`:]+$/, '');
  const m = ref ? TABLE_PATH_RE.exec(ref) : null;
  if (!m || m[1] !== dataset.project || m[2] !== dataset.dataset) return null;
  return `${m[1]}.${m[2]}.${m[3]}`;
}

/** Maps an HTTP error answer from BigQuery (status >= 300). */
export function mapUpstreamError(status: number, rawText: string, ctx: UpstreamContext = {}): UpstreamFailure {
  const internal = logged(status, rawText);
  const parsed = GoogleErrorSchema.safeParse(parseBody(rawText));
  const items = parsed.success ? (parsed.data.error.errors ?? []) : [];
  const reasons = items.map((e) => e.reason ?? '');
  const first = items[0];
  const message = first?.message ?? (parsed.success ? parsed.data.error.message : undefined) ?? '';
  const has = (r: string) => reasons.includes(r);
  // Google's clients decide on the first error's reason only (python-bigquery retry.py `_should_retry`, Go
  // bigquery.go `retryableError`): a later item may describe a consequence, not the cause.
  const reason = reasons[0] ?? '';
  const refused = status === 429 || REFUSED_REASONS.has(reason);
  const failure = (retryable: boolean, error: ApiError): UpstreamFailure => ({ retryable, refused, status, reasons, error });

  if (has('bytesBilledLimitExceeded')) {
    const required = REQUIRED_BYTES_RE.exec(message)?.[1];
    const details: Record<string, unknown> = { stage: 'warehouse', reason: 'bytesBilledLimitExceeded' };
    if (ctx.maxBytesBilled !== undefined) details.maxBytesBilled = ctx.maxBytesBilled;
    if (required) details.bytesRequired = Number(required);
    return failure(
      false,
      new ApiError(
        'QUERY_TOO_EXPENSIVE',
        ctx.maxBytesBilled !== undefined
          ? `the query would bill more than this key's byte-scan ceiling of ${ctx.maxBytesBilled} bytes; narrow the date range or ` +
              `select fewer columns`
          : "the query would bill more than this key's byte-scan ceiling; narrow the date range or select fewer columns",
        { details, internal },
      ),
    );
  }

  const userReason =
    reasons.find((r) => USER_QUERY_REASONS.has(r)) ?? (has('invalid') && first?.location === 'query' ? 'invalid' : undefined);
  if (userReason) {
    const details: Record<string, unknown> = { stage: 'warehouse', reason: userReason };
    const lc = LINE_COL_RE.exec(message);
    if (lc) {
      details.line = Number(lc[1]);
      details.column = Number(lc[2]);
    }
    return failure(false, new ApiError('QUERY_FAILED', message || 'the warehouse rejected the query', { details, internal }));
  }

  // A table missing from the brand's own dataset is a typo, not a permission problem. The guard already confined
  // every reference to that dataset, so naming the table tells the caller nothing about other tenants.
  const ownMissing = has('notFound') ? missingOwnTable(message, ctx.dataset) : null;
  if (ownMissing) {
    // The hint names a view the SQL guard accepts (it refuses INFORMATION_SCHEMA.TABLES).
    return failure(
      false,
      new ApiError(
        'QUERY_FAILED',
        `table ${ownMissing} does not exist in this brand's dataset; list its tables and columns with SELECT table_name, column_name ` +
          `FROM \`${ctx.dataset?.project}.${ctx.dataset?.dataset}.INFORMATION_SCHEMA.COLUMNS\``,
        {
          details: { stage: 'warehouse', reason: 'notFound', table: ownMissing },
          internal,
        },
      ),
    );
  }

  // Reading a stored result: a missing job, a missing (evicted) anonymous result table, or one the brand's account
  // may no longer read (its credential changed since the run: the table belongs to the old account) all mean the
  // result is gone for this caller, never a permission problem with the brand's data (review N9).
  if (ctx.readsStoredResult && (has('notFound') || has('accessDenied'))) return failure(false, resultGone(internal));

  // The brand's own dataset "not found in location X": the service's BIGQUERY_LOCATION (or the brand's dataset
  // setting) is wrong. A deployment error, not a tenant-isolation refusal.
  if (has('notFound') && ownDatasetElsewhere(message, ctx.dataset)) {
    return failure(
      false,
      new ApiError(
        'INTERNAL',
        "the brand's dataset is not in the warehouse location the service is configured for (BIGQUERY_LOCATION); " +
          'this is a deployment error, quote the requestId to support',
        {
          details: { stage: 'warehouse', reason: 'notFound' },
          internal,
        },
      ),
    );
  }

  if ((has('accessDenied') || has('notFound')) && OBJECT_REF_RE.test(message) && !/^Not found: Job\b/i.test(message)) {
    const details: Record<string, unknown> = { stage: 'warehouse', reason: has('accessDenied') ? 'accessDenied' : 'notFound' };
    const ref = OBJECT_REF_RE.exec(message)?.[1];
    if (ref) details.reference = ref.replace(/[`:]+$/, '');
    return failure(
      false,
      new ApiError('FORBIDDEN_TABLE', "the query referenced a table or dataset outside this brand's access, or one that does not exist", {
        details,
        internal,
      }),
    );
  }

  if (status === 401 || has('authError') || has('unauthorized')) {
    return failure(false, new ApiError('WAREHOUSE_ERROR', "the warehouse refused the service's credentials", { internal }));
  }

  // A job that failed in BigQuery: not retried with the same request (it would only repeat the failure).
  if (has('jobRateLimitExceeded')) {
    return failure(
      false,
      new ApiError('WAREHOUSE_UNAVAILABLE', 'the warehouse is busy (too many jobs at once); try again later', { internal }),
    );
  }
  if (has('jobInternalError') || has('jobBackendError')) {
    return failure(false, new ApiError('WAREHOUSE_ERROR', 'the warehouse failed to run the query; try again', { internal }));
  }

  // A quota (`quotaExceeded`) resets over minutes to a day: not resent, and the caller is not told to come back in
  // a few seconds (no Retry-After). https://cloud.google.com/bigquery/docs/troubleshoot-quotas
  if (reason === 'quotaExceeded') {
    return failure(
      false,
      new ApiError(
        'WAREHOUSE_UNAVAILABLE',
        "the warehouse project's quota is used up; try again later (quotas reset over minutes to a day)",
        {
          details: { stage: 'warehouse', reason: 'quotaExceeded' },
          internal,
          headers: { 'Retry-After': String(QUOTA_RETRY_AFTER_SECONDS) },
        },
      ),
    );
  }
  const retryable = status >= 500 || status === 429 || RETRYABLE_REASONS.has(reason);
  if (retryable) {
    // 500 and backend/internal errors mean the warehouse broke; the rest (503, 429, gateways, rate and quota
    // limits) mean it is busy or out of reach: try again later.
    const broke = status === 500 || (status < 500 && (reason === 'backendError' || reason === 'internalError'));
    return failure(
      retryable,
      broke
        ? new ApiError('WAREHOUSE_ERROR', 'the warehouse failed to run the query; try again', { internal })
        : new ApiError('WAREHOUSE_UNAVAILABLE', 'the warehouse is unavailable or busy; try again later', { internal }),
    );
  }

  return failure(false, new ApiError('WAREHOUSE_ERROR', 'the warehouse returned an unexpected error', { internal }));
}

/** "Not found: Dataset p:ds was not found in location X" about the brand's own dataset. */
function ownDatasetElsewhere(message: string, dataset: UpstreamContext['dataset']): boolean {
  if (!dataset) return false;
  const m = /^Not found: Dataset ([\w-]+)[:.]([\w]+) was not found in location\b/i.exec(message);
  return m !== null && m[1] === dataset.project && m[2]?.toLowerCase() === dataset.dataset.toLowerCase();
}

/** A fetch that threw (connection refused or dropped): retryable; after the last try, 503. */
export function networkFailure(cause: unknown): UpstreamFailure {
  return {
    retryable: true,
    refused: false,
    status: 0,
    reasons: [],
    error: new ApiError('WAREHOUSE_UNAVAILABLE', 'the warehouse could not be reached; try again later', {
      internal: { network: describeError(cause) },
    }),
  };
}

/** A 2xx answer we cannot read (not JSON, or not BigQuery's shape). */
export function malformedAnswer(why: string, rawText: string): ApiError {
  return new ApiError('WAREHOUSE_ERROR', 'the warehouse returned an answer the service could not read', {
    internal: { malformed: why, body: rawText.slice(0, MAX_LOGGED_BODY) },
  });
}

/**
 * The deadline passed. With a job id the client asks BigQuery to cancel the job (best effort), so the message
 * says a cancel was requested; without one (the warehouse never answered the submission) nothing was cancelled,
 * so it must not say so: the job may still run, and what it bills is counted once known.
 */
export function deadlineExceeded(timeoutMs: number, jobId: string | null, why?: string): ApiError {
  const message = jobId
    ? `the query did not finish within ${timeoutMs} ms${why ? ` (${why})` : ''}; its cancellation was requested. Narrow it or try again`
    : `the warehouse did not confirm the query within ${timeoutMs} ms; it may still run there, and any bytes it bills count against ` +
      `this key. Narrow it or try again`;
  return new ApiError('WAREHOUSE_TIMEOUT', message, { details: { stage: 'warehouse', timeoutMs }, internal: { jobId } });
}

/** A cursor whose stored result BigQuery no longer holds (it keeps results about a day; the local warehouse less). */
export function resultGone(internal?: unknown): ApiError {
  return new ApiError('VALIDATION', 'the result this cursor points at is no longer held by the warehouse; run the query again', {
    details: { in: 'body', issues: [{ path: 'cursor', message: 'result no longer available' }] },
    internal,
  });
}
