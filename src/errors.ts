import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from './lib/log';

/** What the errors table of docs/api.md says of a code: when it is returned, and whether the contract names it. */
interface ErrorInfo {
  status: ContentfulStatusCode;
  /** When the code is returned, for a reader of the API reference (Markdown). */
  when: string;
  /** `contract` for the spec's codes, `extension` (and the extension's name) for the service's own. */
  origin: string;
}

/**
 * Every error code the API can return: its HTTP status and what it means. The spec's table plus the service codes.
 * The one place a code is written: the OpenAPI enum, each route's error responses and the errors table of
 * docs/api.md (`npm run docs:errors`, checked by a test) are made from it.
 */
export const ERRORS = {
  UNAUTHORIZED: { status: 401, when: 'key missing, invalid or revoked', origin: 'contract' },
  FORBIDDEN_BRAND: { status: 403, when: 'the key cannot reach the given brand', origin: 'contract' },
  FORBIDDEN_TABLE: {
    status: 403,
    when: "the query referenced a table, dataset or routine outside the brand's dataset",
    origin: 'contract',
  },
  FORBIDDEN_ORIGIN: { status: 403, when: 'a browser `Origin` not in `ALLOWED_ORIGINS` (MCP)', origin: 'extension' },
  VALIDATION: {
    status: 400,
    when: 'bad body or parameter (named in the message), `brandId` missing for an organization key, a bad `limit` or `cursor`',
    origin: 'contract',
  },
  INVALID_SQL: { status: 400, when: 'not read-only, or several statements', origin: 'contract' },
  QUERY_TOO_EXPENSIVE: { status: 400, when: "the estimate exceeds the key's byte ceiling", origin: 'contract' },
  QUERY_FAILED: { status: 400, when: 'the query was rejected (syntax and similar)', origin: 'contract' },
  REPORT_NOT_FOUND: { status: 404, when: 'no such report visible to the brand', origin: 'contract' },
  QUERY_NOT_FOUND: { status: 404, when: 'the `queryId` is unknown or not visible to the brand', origin: 'contract' },
  FEEDBACK_NOT_FOUND: {
    status: 404,
    when: 'no data-issue report with that reference was filed by these credentials',
    origin: 'extension (Feedback)',
  },
  FEEDBACK_WRITE_FORBIDDEN: {
    status: 403,
    when: 'an assistant connection approved without filing data-issue reports',
    origin: 'extension (Feedback)',
  },
  MEMORY_NOT_FOUND: {
    status: 404,
    when: "the memory is missing, deleted, or reaches none of the caller's brands",
    origin: 'extension (Memories)',
  },
  MEMORY_WRITE_FORBIDDEN: {
    status: 403,
    when: "a memory write without the `memories:write` permission or outside the writer's scope",
    origin: 'extension (Memories)',
  },
  MEMORY_LIMIT_EXCEEDED: { status: 409, when: 'the owner already has 200 live memories', origin: 'extension (Memories)' },
  PRECONDITION_FAILED: {
    status: 412,
    when: '`If-Match` (or MCP `expectedVersion`) names a version the memory is no longer at (`details.currentVersion`)',
    origin: 'extension (Memories)',
  },
  JOB_NOT_FOUND: {
    status: 404,
    when: "no long query job (REST async job, MCP task) with this id among the caller's own",
    origin: 'extension (Long queries)',
  },
  QUERY_CANCELLED: {
    status: 409,
    when: 'the long query was cancelled by its owner (`DELETE` of the job, MCP `tasks/cancel`, `run_query` with `cancel`)',
    origin: 'extension (Long queries)',
  },
  RESULT_GONE: {
    status: 410,
    when: "a finished long job's result is past its 6-hour lifetime (run the query again)",
    origin: 'extension (Long queries)',
  },
  NOT_FOUND: { status: 404, when: 'no route for this path', origin: 'extension' },
  METHOD_NOT_ALLOWED: { status: 405, when: 'the path exists, the method does not (`Allow` header)', origin: 'extension' },
  BRAND_NOT_PROVISIONED: { status: 409, when: 'the brand has no dataset', origin: 'extension' },
  PAYLOAD_TOO_LARGE: { status: 413, when: 'request body over 1 MiB', origin: 'extension' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, when: 'a body that is not JSON', origin: 'extension' },
  USAGE_LIMIT_EXCEEDED: {
    status: 429,
    when: "the key's rolling 24-hour budget is spent, or a per-minute rate (checks, page reads) (`Retry-After`, `details.limit`)",
    origin: 'contract',
  },
  RATE_LIMITED: {
    status: 429,
    when:
      'too many requests from one source to an unauthenticated endpoint ' +
      '(`/oauth/register`, `/oauth/token`, `/authorize`, `/admin/login`; `Retry-After`, `details.limit`)',
    origin: 'extension',
  },
  INTERNAL: { status: 500, when: 'an unexpected failure; the detail is in the log under the request id', origin: 'extension' },
  WAREHOUSE_ERROR: { status: 502, when: 'BigQuery answered with something unusable', origin: 'extension' },
  WAREHOUSE_UNAVAILABLE: { status: 503, when: 'BigQuery could not be reached', origin: 'extension' },
  USAGE_UNAVAILABLE: { status: 503, when: 'the usage counter could not be reached (runs fail closed)', origin: 'extension' },
  WAREHOUSE_TIMEOUT: { status: 504, when: 'the query ran past `QUERY_TIMEOUT_MS` and was cancelled', origin: 'extension' },
} as const satisfies Record<string, ErrorInfo>;

export type ErrorCode = keyof typeof ERRORS;

/** Whether `code` (read back from storage) is one of ours. */
export function isErrorCode(code: string | null): code is ErrorCode {
  return code !== null && Object.hasOwn(ERRORS, code);
}

/** Each code's HTTP status. */
export const ERROR_STATUS = Object.fromEntries(Object.entries(ERRORS).map(([code, e]) => [code, e.status])) as {
  [C in ErrorCode]: (typeof ERRORS)[C]['status'];
};

export interface ApiErrorOptions {
  /** Goes on the wire as `error.details`. */
  details?: unknown;
  /** Upstream bodies, stacks, causes: logged, never sent. */
  internal?: unknown;
  /**
   * Stable slug naming why a server-side error happened (`d1_write_failed`, `credentials_misconfigured`), so log
   * searches and alerts key on it instead of on message text. Logged, never sent. Give one to every `INTERNAL`.
   */
  reason?: string;
  /** Extra response headers (e.g. Retry-After). */
  headers?: Record<string, string>;
}

/**
 * The one error type. `message` and `details` go on the wire; `internal` and `reason` go to the log only.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ContentfulStatusCode;
  readonly details?: unknown;
  readonly internal?: unknown;
  readonly reason?: string;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = opts.details;
    this.internal = opts.internal;
    this.reason = opts.reason;
    this.headers = opts.headers;
  }
}

export interface ErrorBody {
  error: { code: string; message: string; requestId: string; details?: unknown };
}

export function errorBody(err: ApiError, requestId: string): ErrorBody {
  const body: ErrorBody = { error: { code: err.code, message: err.message, requestId } };
  if (err.details !== undefined) body.error.details = err.details;
  return body;
}

/** Unknown throws stay 500 with a generic message; the cause goes to the log. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError('INTERNAL', 'internal error; quote the requestId to support', { internal: err, reason: 'uncaught_exception' });
}

/** What a transport sends for an error: REST writes it as the response, MCP as a response or a tool result. */
export interface ErrorReport {
  error: ApiError;
  status: ContentfulStatusCode;
  body: ErrorBody;
  /** `content-type`, `x-request-id` and the error's own headers (e.g. Retry-After). */
  headers: Record<string, string>;
}

/**
 * The one place a thrown value becomes an error report and a log line, for every transport (REST responses,
 * MCP HTTP-level responses, MCP tool results). Logs exactly once, so callers must not log the same error:
 * - status >= 500: `error` "request failed" with the code, the reason slug and the internal detail (the cause of
 *   an unknown throw);
 * - 4xx carrying internal detail (e.g. an upstream rejection): `warn` "request rejected" with the detail;
 * - other 4xx (the caller's mistake, fully told in the body): `info` "request rejected".
 * `context` adds where it happened (`{ path }`, `{ tool }`) to the line.
 */
export function reportError(err: unknown, requestId: string, log: Logger, context: Record<string, unknown> = {}): ErrorReport {
  const error = toApiError(err);
  const fields: Record<string, unknown> = { ...context, code: error.code, status: error.status };
  if (error.reason !== undefined) fields.reason = error.reason;
  if (error.status >= 500) {
    log.error('request failed', { ...fields, internal: describeError(error.internal ?? err) });
  } else if (error.internal !== undefined) {
    log.warn('request rejected', { ...fields, internal: describeError(error.internal) });
  } else {
    log.info('request rejected', fields);
  }
  return {
    error,
    status: error.status,
    body: errorBody(error, requestId),
    headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...error.headers },
  };
}

/** An error report as a standalone Response (for code outside hono's context, e.g. the MCP endpoint). */
export function errorReportResponse(report: ErrorReport): Response {
  return new Response(JSON.stringify(report.body), { status: report.status, headers: report.headers });
}

/** Safe text of an unknown thrown value for logs (never prints "false" or "[object Object]"). */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
