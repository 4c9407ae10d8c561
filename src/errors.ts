import type { ContentfulStatusCode } from 'hono/utils/http-status';

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
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  BRAND_NOT_PROVISIONED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  USAGE_LIMIT_EXCEEDED: 429,
  INTERNAL: 500,
  WAREHOUSE_ERROR: 502,
  WAREHOUSE_UNAVAILABLE: 503,
  USAGE_UNAVAILABLE: 503,
  WAREHOUSE_TIMEOUT: 504,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The one error type. `message` and `details` go on the wire; `internal` (upstream bodies, stacks, reasons)
 * goes to the log only.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ContentfulStatusCode;
  readonly details?: unknown;
  readonly internal?: unknown;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, opts: { details?: unknown; internal?: unknown; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = opts.details;
    this.internal = opts.internal;
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
  return new ApiError('INTERNAL', 'internal error; quote the requestId to support', { internal: err });
}

/** Safe text of an unknown thrown value for logs (never prints "false" or "[object Object]"). */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
