import { describe, expect, it } from 'vitest';
import { ApiError, errorReportResponse, reportError } from '../src/errors';
import type { Logger } from '../src/lib/log';

/** A logger that keeps every line, so a test can count them by level. */
function recordingLogger() {
  const lines: { level: 'info' | 'warn' | 'error'; msg: string; fields: Record<string, unknown> }[] = [];
  const log: Logger = {
    info: (msg, fields = {}) => lines.push({ level: 'info', msg, fields }),
    warn: (msg, fields = {}) => lines.push({ level: 'warn', msg, fields }),
    error: (msg, fields = {}) => lines.push({ level: 'error', msg, fields }),
  };
  return { log, lines };
}

describe('reportError: one error report and exactly one log line per error', () => {
  it.each([
    {
      name: 'an unknown throw: 500 INTERNAL, generic message, cause and reason logged at error',
      err: new TypeError('x is undefined'),
      status: 500,
      code: 'INTERNAL',
      level: 'error',
      logged: { reason: 'uncaught_exception', internal: 'TypeError: x is undefined' },
    },
    {
      name: 'an INTERNAL with a reason slug: logged at error with the slug',
      err: new ApiError('INTERNAL', 'internal error', { reason: 'd1_write_failed', internal: 'D1_ERROR: disk full' }),
      status: 500,
      code: 'INTERNAL',
      level: 'error',
      logged: { reason: 'd1_write_failed', internal: 'D1_ERROR: disk full' },
    },
    {
      name: 'a 5xx upstream error: logged at error with its internal detail',
      err: new ApiError('WAREHOUSE_ERROR', 'the warehouse failed', { internal: { upstream: 'boom' } }),
      status: 502,
      code: 'WAREHOUSE_ERROR',
      level: 'error',
      logged: { internal: '{"upstream":"boom"}' },
    },
    {
      name: 'a 4xx with internal detail: warn with the detail',
      err: new ApiError('QUERY_FAILED', 'Syntax error', { internal: 'job failed: invalidQuery' }),
      status: 400,
      code: 'QUERY_FAILED',
      level: 'warn',
      logged: { internal: 'job failed: invalidQuery' },
    },
    {
      name: "a plain 4xx (the caller's mistake): info, nothing internal",
      err: new ApiError('FORBIDDEN_BRAND', 'no'),
      status: 403,
      code: 'FORBIDDEN_BRAND',
      level: 'info',
      logged: {},
    },
  ])('$name', ({ err, status, code, level, logged }) => {
    const { log, lines } = recordingLogger();
    const report = reportError(err, 'req_1', log, { path: '/v1/data/x' });
    expect(report.status).toBe(status);
    expect(report.body.error).toMatchObject({ code, requestId: 'req_1' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level, fields: { code, status, path: '/v1/data/x', ...logged } });
    if (level === 'info') expect(lines[0]?.fields).not.toHaveProperty('internal');
    // Nothing internal ever reaches the wire.
    expect(JSON.stringify(report.body)).not.toMatch(/undefined|D1_ERROR|boom|invalidQuery|d1_write_failed|uncaught_exception/);
  });

  it("carries x-request-id, the JSON content type and the error's own headers into the response", async () => {
    const { log } = recordingLogger();
    const report = reportError(new ApiError('USAGE_LIMIT_EXCEEDED', 'limit', { headers: { 'retry-after': '60' } }), 'req_2', log);
    const res = errorReportResponse(report);
    expect(res.status).toBe(429);
    expect(res.headers.get('x-request-id')).toBe('req_2');
    expect(res.headers.get('retry-after')).toBe('60');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ error: { code: 'USAGE_LIMIT_EXCEEDED', message: 'limit', requestId: 'req_2' } });
  });
});
