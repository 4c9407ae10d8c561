import type { Context } from 'hono';
import type { AppEnv } from '../app-env';
import { ApiError, describeError, errorBody, toApiError } from '../errors';
import { createLogger, newRequestId } from '../lib/log';

/** The one place an error becomes a response: `{ error: { code, message, requestId, details? } }`. */
export function errorResponse(c: Context<AppEnv>, err: unknown): Response {
  const apiErr = toApiError(err);
  const requestId = c.get('requestId') ?? newRequestId();
  const log = c.get('log') ?? createLogger(requestId);
  if (apiErr.status >= 500) {
    log.error('request failed', { code: apiErr.code, internal: describeError(apiErr.internal ?? err), path: c.req.path });
  } else if (apiErr.internal !== undefined) {
    log.warn('request rejected', { code: apiErr.code, internal: describeError(apiErr.internal) });
  }
  const res = c.json(errorBody(apiErr, requestId), apiErr.status);
  res.headers.set('x-request-id', requestId);
  for (const [k, v] of Object.entries(apiErr.headers ?? {})) res.headers.set(k, v);
  return res;
}

type Issues = { issues: readonly { path: readonly PropertyKey[]; message: string }[] };

/** Formats a zod validation failure (any route, any target) as 400 VALIDATION naming the parameter(s). */
export function validationFailure(error: Issues, validationTarget: string, c: Context<AppEnv>): Response {
  const issues = error.issues.map((i) => ({
    path: i.path.map(String).join('.') || '(body)',
    message: i.message,
  }));
  const target = validationTarget === 'json' ? 'body' : validationTarget;
  const first = issues[0];
  const message = first
    ? `invalid ${target === 'body' ? 'request body' : `${target} parameter`}${first.path !== '(body)' ? ` ${first.path}` : ''}: ${first.message}`
    : `invalid ${target}`;
  return errorResponse(c, new ApiError('VALIDATION', message, { details: { in: target, issues } }));
}

/** The app's defaultHook: passes successes through, formats failures with `validationFailure`. */
export function validationHook(
  result: { success: true } | { success: false; error: Issues; target: string },
  c: Context<AppEnv>,
): Response | undefined {
  return result.success ? undefined : validationFailure(result.error, result.target, c);
}
