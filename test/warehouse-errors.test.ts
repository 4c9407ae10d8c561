import { describe, expect, it } from 'vitest';
import { mapUpstreamError, networkFailure } from '../src/warehouse/errors';

/** BigQuery's error envelope, as its REST API sends it. */
function gErr(code: number, reason: string, message: string, location?: string): string {
  return JSON.stringify({
    error: { code, message, status: 'X', errors: [{ message, domain: 'global', reason, ...(location ? { location } : {}) }] },
  });
}

describe('mapUpstreamError', () => {
  it('bytesBilledLimitExceeded -> 400 QUERY_TOO_EXPENSIVE naming the ceiling and the bytes needed', () => {
    const { retryable, error } = mapUpstreamError(
      400,
      gErr(400, 'bytesBilledLimitExceeded', 'Query exceeded limit for bytes billed: 1000. 10485760 or higher required.'),
      { maxBytesBilled: 1000 },
    );
    expect(retryable).toBe(false);
    expect(error).toMatchObject({ code: 'QUERY_TOO_EXPENSIVE', status: 400 });
    expect(error.message).toContain('1000 bytes');
    expect(error.details).toEqual({
      stage: 'warehouse',
      reason: 'bytesBilledLimitExceeded',
      maxBytesBilled: 1000,
      bytesRequired: 10485760,
    });
  });

  it("invalidQuery -> 400 QUERY_FAILED with BigQuery's message and line/column", () => {
    const msg = 'Syntax error: Expected end of input but got identifier "x" at [2:15]';
    const { retryable, error } = mapUpstreamError(400, gErr(400, 'invalidQuery', msg, 'query'));
    expect(retryable).toBe(false);
    expect(error).toMatchObject({ code: 'QUERY_FAILED', status: 400, message: msg });
    expect(error.details).toEqual({ stage: 'warehouse', reason: 'invalidQuery', line: 2, column: 15 });
  });

  it('invalidQuery without a position has no line/column', () => {
    const { error } = mapUpstreamError(400, gErr(400, 'invalidQuery', 'Query error: division by zero: 1 / 0'));
    expect(error.details).toEqual({ stage: 'warehouse', reason: 'invalidQuery' });
  });

  it.each([
    ['resourcesExceeded', 400, 'Resources exceeded during query execution: too many partitions'],
    ['responseTooLarge', 403, 'Response too large to return.'],
    ['invalid', 400, 'Bad int64 value: abc'],
  ])("%s about the user's query -> 400 QUERY_FAILED", (reason, status, msg) => {
    const { error } = mapUpstreamError(status, gErr(status, reason, msg, 'query'));
    expect(error).toMatchObject({ code: 'QUERY_FAILED', message: msg });
  });

  it.each([
    [
      'accessDenied',
      403,
      'Access Denied: Table service-v1:globex.fact__orders: User does not have permission to query table service-v1:globex.fact__orders.',
      'service-v1:globex.fact__orders',
    ],
    ['notFound', 404, 'Not found: Table service-v1:acme.nope was not found in location US', 'service-v1:acme.nope'],
    ['notFound', 404, 'Not found: Dataset service-v1:secret was not found in location US', 'service-v1:secret'],
  ])('%s on a table or dataset -> 403 FORBIDDEN_TABLE without upstream text', (reason, status, msg, ref) => {
    const { retryable, error } = mapUpstreamError(status, gErr(status, reason, msg));
    expect(retryable).toBe(false);
    expect(error).toMatchObject({ code: 'FORBIDDEN_TABLE', status: 403 });
    expect(error.message).not.toContain('User does not have');
    expect(error.details).toEqual({ stage: 'warehouse', reason, reference: ref });
  });

  it.each([
    ['Not found: Table service-v1:acme.fact__orderz was not found in location US', 'service-v1.acme.fact__orderz'],
    ['Not found: Table service-v1.acme.typo was not found in location US', 'service-v1.acme.typo'],
  ])(
    "notFound on a table of the brand's own dataset (%s) -> 400 QUERY_FAILED naming it: a typo, not a permission problem",
    (msg, table) => {
      const { retryable, error } = mapUpstreamError(404, gErr(404, 'notFound', msg), {
        dataset: { project: 'service-v1', dataset: 'acme' },
      });
      expect(retryable).toBe(false);
      expect(error).toMatchObject({ code: 'QUERY_FAILED', status: 400, details: { stage: 'warehouse', reason: 'notFound', table } });
      expect(error.message).toContain(table);
      expect(error.message).not.toContain('location US');
      // The hint names something the SQL guard accepts (it refuses INFORMATION_SCHEMA.TABLES).
      expect(error.message).toContain('`service-v1.acme.INFORMATION_SCHEMA.COLUMNS`');
      expect(error.message).not.toContain('INFORMATION_SCHEMA.TABLES');
    },
  );

  it.each([
    ['the own dataset in another location', 'Not found: Dataset service-v1:acme was not found in location US'],
    ['the own dataset, case as BigQuery spells it', 'Not found: Dataset service-v1:ACME was not found in location EU'],
  ])('%s is a deployment error (BIGQUERY_LOCATION), 500 INTERNAL, not FORBIDDEN_TABLE', (_label, msg) => {
    const { retryable, error } = mapUpstreamError(404, gErr(404, 'notFound', msg), { dataset: { project: 'service-v1', dataset: 'acme' } });
    expect(retryable).toBe(false);
    expect(error).toMatchObject({ code: 'INTERNAL', status: 500 });
    expect(error.message).toContain('BIGQUERY_LOCATION');
  });

  it.each([
    ['another dataset', 'Not found: Table service-v1:globex.fact__orders was not found in location US'],
    ['another project', 'Not found: Table other-project:acme.fact__orders was not found in location US'],
    ['another dataset itself', 'Not found: Dataset service-v1:globex was not found in location US'],
    ['access denied on an own table', 'Access Denied: Table service-v1:acme.fact__orders: User does not have permission'],
  ])('outside the own-dataset typo case (%s) it stays 403 FORBIDDEN_TABLE', (_label, msg) => {
    const reason = msg.startsWith('Access') ? 'accessDenied' : 'notFound';
    const { error } = mapUpstreamError(404, gErr(404, reason, msg), { dataset: { project: 'service-v1', dataset: 'acme' } });
    expect(error.code).toBe('FORBIDDEN_TABLE');
  });

  it('notFound on the job behind a cursor -> 400 VALIDATION naming the cursor (the stored result is gone)', () => {
    const { error } = mapUpstreamError(404, gErr(404, 'notFound', 'Not found: Job service-v1:US.job_123'), { readsStoredResult: true });
    expect(error).toMatchObject({ code: 'VALIDATION', status: 400, details: { issues: [{ path: 'cursor' }] } });
    expect(error.message).not.toContain('job_123');
  });

  it('an evicted result table behind a cursor is the same "result gone", never FORBIDDEN_TABLE', () => {
    const msg = 'Not found: Table service-v1:_8c3b1d0a.anon4f2e9c1b was not found in location US';
    const { error } = mapUpstreamError(404, gErr(404, 'notFound', msg), {
      readsStoredResult: true,
      dataset: { project: 'service-v1', dataset: 'acme' },
    });
    expect(error).toMatchObject({ code: 'VALIDATION', status: 400, details: { issues: [{ path: 'cursor' }] } });
  });

  it.each([
    ['jobInternalError', 'WAREHOUSE_ERROR'],
    ['jobBackendError', 'WAREHOUSE_ERROR'],
    ['jobRateLimitExceeded', 'WAREHOUSE_UNAVAILABLE'],
  ])('%s (a job that already failed) is not retried: the same request would only repeat it; it is %s', (reason, code) => {
    const { retryable, refused, error } = mapUpstreamError(400, gErr(400, reason, 'The job failed'));
    expect(retryable).toBe(false);
    expect(refused).toBe(false);
    expect(error.code).toBe(code);
  });

  it.each([
    [429, 'rateLimitExceeded', true],
    [403, 'rateLimitExceeded', true],
    [403, 'quotaExceeded', true],
    [503, 'backendError', false],
    [500, 'internalError', false],
  ])('%i %s: refused before anything ran = %s (only refusals let a query be resent)', (status, reason, refused) => {
    expect(mapUpstreamError(status, gErr(status, reason, 'x')).refused).toBe(refused);
  });

  it.each([
    [
      'accessDenied on the project (our IAM)',
      403,
      gErr(
        403,
        'accessDenied',
        'Access Denied: Project service-v1: User does not have bigquery.jobs.create permission in project service-v1.',
      ),
    ],
    ['notFound on a job', 404, gErr(404, 'notFound', 'Not found: Job service-v1:US.job_123')],
    ['401 bad credentials', 401, gErr(401, 'authError', 'Request had invalid authentication credentials.')],
    ['an unknown 400', 400, gErr(400, 'invalid', 'Invalid value for maxResults')],
    ['a 404 with an HTML body', 404, '<html>nope</html>'],
  ])('%s -> 502 WAREHOUSE_ERROR, not retried, raw body only internal', (_label, status, body) => {
    const { retryable, error } = mapUpstreamError(status, body);
    expect(retryable).toBe(false);
    expect(error).toMatchObject({ code: 'WAREHOUSE_ERROR', status: 502 });
    expect(error.details).toBeUndefined();
    expect(error.message).not.toContain(body.slice(0, 20));
    expect(error.internal).toEqual({ status, body });
  });

  it.each([
    [503, gErr(503, 'backendError', 'Backend error'), 'WAREHOUSE_UNAVAILABLE'],
    [502, 'Bad Gateway', 'WAREHOUSE_UNAVAILABLE'],
    [504, '', 'WAREHOUSE_UNAVAILABLE'],
    [429, gErr(429, 'rateLimitExceeded', 'Exceeded rate limits'), 'WAREHOUSE_UNAVAILABLE'],
    [403, gErr(403, 'rateLimitExceeded', 'Exceeded rate limits: too many concurrent queries'), 'WAREHOUSE_UNAVAILABLE'],
    [500, gErr(500, 'internalError', 'An internal error occurred'), 'WAREHOUSE_ERROR'],
    [400, gErr(400, 'backendError', 'Backend error'), 'WAREHOUSE_ERROR'],
  ])('%i %s is retried and, after the last try, is %s', (status, body, code) => {
    const { retryable, error } = mapUpstreamError(status, body);
    expect(retryable).toBe(true);
    expect(error.code).toBe(code);
    expect(error.message).not.toMatch(/Backend error|rate limits|internal error occurred/);
  });

  it('quotaExceeded is 503 but not retried, and the caller is told minutes, not "retry in 5 s" (N7)', () => {
    const { retryable, error } = mapUpstreamError(
      403,
      gErr(403, 'quotaExceeded', 'Quota exceeded: Your project exceeded quota for free query bytes scanned.'),
    );
    expect(retryable).toBe(false);
    expect(error).toMatchObject({ code: 'WAREHOUSE_UNAVAILABLE', status: 503, details: { reason: 'quotaExceeded' } });
    expect(Number(error.headers?.['Retry-After'])).toBeGreaterThanOrEqual(60);
  });

  it("decides on errors[0].reason, as Google's clients do: a later item does not make a failure retryable (N7)", () => {
    const body = (...reasons: string[]) =>
      JSON.stringify({ error: { code: 400, message: 'x', errors: reasons.map((reason) => ({ message: 'x', domain: 'global', reason })) } });
    expect(mapUpstreamError(400, body('invalid', 'backendError')).retryable).toBe(false);
    expect(mapUpstreamError(403, body('accessDenied', 'rateLimitExceeded')).refused).toBe(false);
    expect(mapUpstreamError(400, body('backendError', 'invalid')).retryable).toBe(true);
  });

  it('a cursor read refused by the account (the result belongs to a credential since replaced) is "result gone", not FORBIDDEN_TABLE (N9)', () => {
    const denied = gErr(
      403,
      'accessDenied',
      'Access Denied: Table p:_abc.anonjob_1: User does not have permission to query table, or perhaps it does not exist.',
    );
    expect(mapUpstreamError(403, denied, { readsStoredResult: true }).error).toMatchObject({
      code: 'VALIDATION',
      status: 400,
      details: { issues: [{ path: 'cursor' }] },
    });
    expect(mapUpstreamError(403, denied).error.code).toBe('FORBIDDEN_TABLE');
  });

  it('keeps at most 4 KiB of the upstream body for the log', () => {
    const { error } = mapUpstreamError(500, 'x'.repeat(10_000));
    expect(error.internal).toEqual({ status: 500, body: 'x'.repeat(4096) });
  });
});

describe('networkFailure', () => {
  it('is retried and ends as 503 WAREHOUSE_UNAVAILABLE', () => {
    const { retryable, error } = networkFailure(new TypeError('Network connection lost.'));
    expect(retryable).toBe(true);
    expect(error).toMatchObject({ code: 'WAREHOUSE_UNAVAILABLE', status: 503 });
  });
});
