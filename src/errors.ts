import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from './lib/log';

/** Every error code the API can return, with its HTTP status. The spec's table plus the service codes. */
export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  FORBIDDEN_BRAND: 403,
  FORBIDDEN_TABLE: 403,
  FORBIDDEN_ORIGIN: 403,
  VALIDATION: 400,
  INVALID_SQL: 400,
  QUERY_TOO_EXPENSIVE: 400,
  QUERY_FAILED: 400,
  REPORT_NOT_FOUND: 404,
  QUERY_NOT_FOUND: 404,
  MEMORY_NOT_FOUND: 404,
  MEMORY_WRITE_FORBIDDEN: 403,
  MEMORY_LIMIT_EXCEEDED: 409,
  PRECONDITION_FAILED: 412,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  BRAND_NOT_PROVISIONED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  USAGE_LIMIT_EXCEEDED: 429,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  WAREHOUSE_ERROR: 502,
  WAREHOUSE_UNAVAILABLE: 503,
  USAGE_UNAVAILABLE: 503,
  WAREHOUSE_TIMEOUT: 504,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

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
