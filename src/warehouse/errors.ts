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
  error: ApiError;
}

/** Largest slice of an upstream body kept for the log. */
const MAX_LOGGED_BODY = 4096;

const RETRYABLE_REASONS = new Set(['backendError', 'internalError', 'rateLimitExceeded', 'jobBackendError', 'jobInternalError']);
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

/** Maps an HTTP error answer from BigQuery (status >= 300). `maxBytesBilled` is the ceiling that was sent. */
export function mapUpstreamError(status: number, rawText: string, ctx: { maxBytesBilled?: number } = {}): UpstreamFailure {
  const internal = logged(status, rawText);
  const parsed = GoogleErrorSchema.safeParse(parseBody(rawText));
  const items = parsed.success ? (parsed.data.error.errors ?? []) : [];
  const reasons = items.map((e) => e.reason ?? '');
  const first = items[0];
  const message = first?.message ?? (parsed.success ? parsed.data.error.message : undefined) ?? '';
  const has = (r: string) => reasons.includes(r);

  if (has('bytesBilledLimitExceeded')) {
    const required = REQUIRED_BYTES_RE.exec(message)?.[1];
    const details: Record<string, unknown> = { stage: 'warehouse', reason: 'bytesBilledLimitExceeded' };
    if (ctx.maxBytesBilled !== undefined) details.maxBytesBilled = ctx.maxBytesBilled;
    if (required) details.bytesRequired = Number(required);
    return {
      retryable: false,
      error: new ApiError(
        'QUERY_TOO_EXPENSIVE',
        ctx.maxBytesBilled !== undefined
          ? `the query would bill more than this key's byte-scan ceiling of ${ctx.maxBytesBilled} bytes; narrow the date range or select fewer columns`
          : "the query would bill more than this key's byte-scan ceiling; narrow the date range or select fewer columns",
        { details, internal },
      ),
    };
  }

  const userReason = reasons.find((r) => USER_QUERY_REASONS.has(r)) ?? (has('invalid') && first?.location === 'query' ? 'invalid' : undefined);
  if (userReason) {
    const details: Record<string, unknown> = { stage: 'warehouse', reason: userReason };
    const lc = LINE_COL_RE.exec(message);
    if (lc) {
      details.line = Number(lc[1]);
      details.column = Number(lc[2]);
    }
    return { retryable: false, error: new ApiError('QUERY_FAILED', message || 'the warehouse rejected the query', { details, internal }) };
  }

  if ((has('accessDenied') || has('notFound')) && OBJECT_REF_RE.test(message) && !/^Not found: Job\b/i.test(message)) {
    const details: Record<string, unknown> = { stage: 'warehouse', reason: has('accessDenied') ? 'accessDenied' : 'notFound' };
    const ref = OBJECT_REF_RE.exec(message)?.[1];
    if (ref) details.reference = ref.replace(/[`:]+$/, '');
    return {
      retryable: false,
      error: new ApiError('FORBIDDEN_TABLE', 'the query referenced a table or dataset outside this brand\'s access, or one that does not exist', {
        details,
        internal,
      }),
    };
  }

  if (status === 401 || has('authError') || has('unauthorized')) {
    return { retryable: false, error: new ApiError('WAREHOUSE_ERROR', 'the warehouse refused the service\'s credentials', { internal }) };
  }

  const retryable = status >= 500 || status === 429 || reasons.some((r) => RETRYABLE_REASONS.has(r));
  if (retryable || has('quotaExceeded')) {
    // 500 and backend/internal errors mean the warehouse broke; the rest (503, 429, gateways, rate and quota
    // limits) mean it is busy or out of reach: try again later.
    const broke = status === 500 || (status < 500 && reasons.some((r) => r === 'backendError' || r === 'internalError'));
    return {
      retryable,
      error: broke
        ? new ApiError('WAREHOUSE_ERROR', 'the warehouse failed to run the query; try again', { internal })
        : new ApiError('WAREHOUSE_UNAVAILABLE', 'the warehouse is unavailable or busy; try again later', { internal }),
    };
  }

  return { retryable: false, error: new ApiError('WAREHOUSE_ERROR', 'the warehouse returned an unexpected error', { internal }) };
}

/** A fetch that threw (connection refused or dropped): retryable; after the last try, 503. */
export function networkFailure(cause: unknown): UpstreamFailure {
  return {
    retryable: true,
    error: new ApiError('WAREHOUSE_UNAVAILABLE', 'the warehouse could not be reached; try again later', { internal: { network: describeError(cause) } }),
  };
}

/** A 2xx answer we cannot read (not JSON, or not BigQuery's shape). */
export function malformedAnswer(why: string, rawText: string): ApiError {
  return new ApiError('WAREHOUSE_ERROR', 'the warehouse returned an answer the service could not read', {
    internal: { malformed: why, body: rawText.slice(0, MAX_LOGGED_BODY) },
  });
}

export function deadlineExceeded(timeoutMs: number, jobId: string | null): ApiError {
  return new ApiError('WAREHOUSE_TIMEOUT', `the query did not finish within ${timeoutMs} ms and was cancelled; narrow it or try again`, {
    details: { stage: 'warehouse', timeoutMs },
    internal: { jobId },
  });
}

