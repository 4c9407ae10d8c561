import type { Context } from 'hono';
import type { AppEnv } from '../app-env';
import { requestScope } from '../context';
import { ApiError, reportError } from '../errors';
import { createLogger, newRequestId } from '../lib/log';

/** A REST error response `{ error: { code, message, requestId, details? } }`, logged once by `reportError`. */
export function errorResponse(c: Context<AppEnv>, err: unknown): Response {
  const scope = requestScope();
  const requestId = scope?.requestId ?? newRequestId();
  const log = scope?.log ?? createLogger(requestId);
  const report = reportError(err, requestId, log, { method: c.req.method, path: c.req.path });
  return c.json(report.body, report.status, report.headers);
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
    ? `invalid ${target === 'body' ? 'request body' : `${target} parameter`}` +
      `${first.path !== '(body)' ? ` ${first.path}` : ''}: ${first.message}`
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
