// BigQuery's error shapes: HTTP errors `{ error: { code, message, errors: [{ message, domain, reason }], status } }`
// and a job's `status.errorResult` `{ reason, message, location? }`.

const STATUS_NAMES = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ALREADY_EXISTS',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** An error BigQuery would answer with: HTTP status, `reason`, message. */
export class BqError extends Error {
  /**
   * @param {number} httpStatus
   * @param {string} reason e.g. invalidQuery, notFound, accessDenied, bytesBilledLimitExceeded, backendError
   * @param {string} message
   * @param {{ location?: string, locationType?: string, status?: string }} [extra]
   */
  constructor(httpStatus, reason, message, extra = {}) {
    super(message);
    this.httpStatus = httpStatus;
    this.reason = reason;
    this.extra = extra;
  }
}

/** A query error about the user's SQL: 400 invalidQuery, located at the query parameter as BigQuery does. */
export function invalidQuery(message) {
  return new BqError(400, 'invalidQuery', message, { location: 'query', locationType: 'other' });
}

/** @param {BqError} e */
export function errorBody(e) {
  const item = { message: e.message, domain: 'global', reason: e.reason };
  if (e.extra.location) item.location = e.extra.location;
  if (e.extra.locationType) item.locationType = e.extra.locationType;
  return {
    error: {
      code: e.httpStatus,
      message: e.message,
      errors: [item],
      status: e.extra.status ?? STATUS_NAMES[e.httpStatus] ?? 'UNKNOWN',
    },
  };
}

/** @param {BqError} e */
export function errorResult(e) {
  const r = { reason: e.reason, message: e.message };
  if (e.extra.location) r.location = e.extra.location;
  return r;
}

/** Rebuilds the HTTP error for a failed job from its stored errorResult. */
export function fromErrorResult(r, httpStatus) {
  return new BqError(httpStatus, r.reason, r.message, r.location ? { location: r.location } : {});
}
