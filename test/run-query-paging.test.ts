import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Principal } from '../src/auth/principal';
import { configOf } from '../src/env';
import { ApiError } from '../src/errors';
import { createLogger } from '../src/lib/log';
import type { OpContext } from '../src/context';
import { issueResultCursor, openResultCursor, RESULT_CURSOR_TTL_MS } from '../src/features/query/result-cursor';
import { signCursor } from '../src/http/cursor';
import { runQuery } from '../src/features/query/run-query';
import { authenticateApiKey, generateApiKey } from '../src/auth/api-keys';
import { takeToken } from '../src/usage/meter';
import { meterRate, takeMeter } from '../src/usage/usage';
import { api, expectError, postJson, seedDemo } from './seed';
import { RunResultSchema } from './run-query-fixtures';

// Result paging over REST: result cursors (POST /v1/data/query/page), totalRows, the window a stored query ran with,
// missing tables as QUERY_FAILED, and the meter on dry runs and refused queries. Against the local warehouse,
// whose request journal shows which BigQuery calls were made.

const WH = env.BIGQUERY_API_BASE;
const ORDERS = '`service-v1.acme.fact__orders`';

const Page = RunResultSchema;

const Journal = z.object({
  requests: z.array(z.object({ op: z.string(), path: z.string(), query: z.record(z.string(), z.string()), status: z.number().nullable() })),
});

/** BigQuery calls the local warehouse received whose SQL contains `marker` (jobs.query / jobs.insert), by op. */
async function warehouseCalls(op: string, marker: string) {
  const res = await fetch(`${WH}/__requests?${new URLSearchParams({ op, sql: marker, limit: '500' })}`);
  return Journal.parse(await res.json()).requests;
}

async function jobCalls(op: string, jobId: string) {
  const res = await fetch(`${WH}/__requests?${new URLSearchParams({ op, limit: '500' })}`);
  return Journal.parse(await res.json()).requests.filter((r) => r.path.includes(`/${jobId}`));
}

/** A brand_acme key principal built directly, for calls to the operation and the cursor functions. */
function acmePrincipal(id: string): Principal {
  return {
    kind: 'key',
    id,
    label: id,
    orgId: 'org_demo',
    scope: 'brand',
    brandIds: ['brand_acme'],
    limits: {
      maxBytesBilled: 10 * 1024 ** 3,
      dailyQueries: 1000,
      dailyBytes: 100 * 1024 ** 3,
      checksPerMinute: Number(env.DEFAULT_CHECKS_PER_MINUTE),
      pageReadsPerMinute: Number(env.DEFAULT_PAGE_READS_PER_MINUTE),
      maxRunningJobs: 2,
      jobTimeoutMs: 1_800_000,
    },
  };
}

const marker = () => `m${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;

beforeAll(async () => {
  await seedDemo();
});

describe('result cursors over REST', () => {
  it('a capped run returns totalRows and nextCursor; the page reads the stored result: every row once, one job, billed once, no run counted', async () => {
    const m = marker();
    // About 12,500 rows over ten days: more than ROW_CAP (10,000), so one page follows.
    const sql = `SELECT order_id FROM ${ORDERS} WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 10 DAY) /* ${m} */`;
    const first = await postJson('/v1/data/query', 'brand', { sql });
    expect(first.status).toBe(200);
    const a = Page.parse(first.body);
    expect(a).toMatchObject({ truncated: true, rowCount: Number(env.ROW_CAP) });
    expect(a.totalRows).toBeGreaterThan(Number(env.ROW_CAP));
    expect(a.stats?.totalBytesBilled).toBeGreaterThan(0);
    const cursor = a.nextCursor ?? '';
    expect(cursor).not.toBe('');

    const second = await postJson('/v1/data/query/page', 'brand', { cursor });
    expect(second.status).toBe(200);
    const b = Page.parse(second.body);
    expect(b).toMatchObject({
      brandId: 'brand_acme',
      truncated: false,
      nextCursor: null,
      totalRows: a.totalRows,
      rowCount: a.totalRows - a.rowCount,
    });
    expect(b.stats).toEqual({ dryRun: false, totalBytesBilled: 0, totalBytesProcessed: 0 });
    expect(b.schema).toEqual(a.schema);
    const ids = [...a.rows, ...b.rows].map((r) => r.order_id);
    expect(ids).toHaveLength(a.totalRows);
    expect(new Set(ids).size).toBe(a.totalRows);

    // The run budget is untouched by the page (same RateLimit-Remaining), and the warehouse ran one job.
    expect(second.headers.get('RateLimit-Remaining')).toBe(first.headers.get('RateLimit-Remaining'));
    expect(second.headers.get('RateLimit-Limit')).toBe(first.headers.get('RateLimit-Limit'));
    expect(await warehouseCalls('query', m)).toHaveLength(1);
    const log = await env.DB.prepare('SELECT COUNT(*) AS n FROM query_log WHERE sql = ?').bind(sql).first<{ n: number }>();
    expect(log?.n).toBe(1);
  });

  it('the page is read with startIndex from the job the run created, in its location', async () => {
    const m = marker();
    const sql = `SELECT order_id, revenue FROM ${ORDERS} WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 9 DAY) /* ${m} */`;
    const a = Page.parse((await postJson('/v1/data/query', 'brand', { sql })).body);
    const b = Page.parse((await postJson('/v1/data/query/page', 'brand', { cursor: a.nextCursor })).body);
    expect(b.rowCount).toBeGreaterThan(0);
    const [run] = await warehouseCalls('query', m);
    expect(run?.status).toBe(200);
    const reads = (
      await fetch(`${WH}/__requests?op=getQueryResults&limit=500`).then(async (r) => Journal.parse(await r.json()).requests)
    ).filter((r) => r.query.startIndex === String(Number(env.ROW_CAP)));
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect(reads.at(-1)?.query).toMatchObject({ location: 'US', maxResults: String(b.rowCount) });
    // The page is one startIndex read; no jobs.get or cancel for it: it bills nothing and there is nothing to stop.
    const jobId = reads.at(-1)?.path.split('/').at(-1) ?? '';
    const byIndex = (await jobCalls('getQueryResults', jobId)).filter((r) => r.query.startIndex !== undefined);
    expect(byIndex).toHaveLength(reads.filter((r) => r.path.endsWith(jobId)).length);
    expect(await jobCalls('cancel', jobId)).toHaveLength(0);
  });

  it('a cursor used by another key is refused with 400 naming only the cursor; so is an edited one', async () => {
    const sql = `SELECT order_id FROM ${ORDERS} WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 10 DAY)`;
    const a = Page.parse((await postJson('/v1/data/query', 'brand', { sql })).body);
    const cursor = a.nextCursor ?? '';
    for (const key of ['org', 'other'] as const) {
      const err = expectError(await postJson('/v1/data/query/page', key, { cursor }), 400, 'VALIDATION');
      expect(err.message).toMatch(/cursor/);
      expect(err.message).not.toMatch(/job_|brand_acme|acme/);
      expect(err.details).toEqual({ in: 'body', issues: [{ path: 'cursor', message: 'not a cursor issued to this key' }] });
    }
    const dot = cursor.indexOf('.');
    const edited = `${cursor.slice(0, dot - 2)}${cursor[dot - 2] === 'A' ? 'B' : 'A'}${cursor.slice(dot - 1)}`;
    expectError(await postJson('/v1/data/query/page', 'brand', { cursor: edited }), 400, 'VALIDATION');
    expectError(await postJson('/v1/data/query/page', 'brand', { cursor, sql: 'SELECT 1' }), 400, 'VALIDATION');
    expectError(await postJson('/v1/data/query/page', 'brand', {}), 400, 'VALIDATION');
    expectError(await postJson('/v1/data/query/page', null, { cursor }), 401, 'UNAUTHORIZED');
  });

  it('cursors expire after 6 hours (well before BigQuery drops a result, about 24 h)', async () => {
    const principal = acmePrincipal('key_demo_brand');
    const t0 = Date.UTC(2026, 0, 1);
    const token = await issueResultCursor(
      env,
      principal,
      { brandId: 'brand_acme', jobId: 'job_x', location: 'US', offset: 200, totalRows: 500 },
      t0,
    );
    expect(await openResultCursor(env, principal, token, t0 + RESULT_CURSOR_TTL_MS)).toMatchObject({
      jobId: 'job_x',
      offset: 200,
      expiresAt: t0 + RESULT_CURSOR_TTL_MS,
    });
    await expect(openResultCursor(env, principal, token, t0 + RESULT_CURSOR_TTL_MS + 1)).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringMatching(/expired/),
    });
    expect(RESULT_CURSOR_TTL_MS).toBe(6 * 3_600_000);
    // The same token for another key, or after the key lost the brand, is refused without saying why.
    await expect(openResultCursor(env, { ...principal, id: 'key_other' }, token, t0)).rejects.toMatchObject({ code: 'VALIDATION' });
    await expect(openResultCursor(env, { ...principal, brandIds: [] }, token, t0)).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('a cursor issued before the readable names (the signed payload is unchanged) still opens', async () => {
    const principal = acmePrincipal('key_demo_brand');
    const t0 = Date.UTC(2026, 0, 1);
    // As the Worker signed positions before, and still does: one letter a field.
    const wire = { b: 'brand_acme', j: 'job_old', l: 'EU', o: 7, n: 9, x: t0 + 1000, q: 'sq_x' };
    const token = await signCursor(env.CURSOR_SECRET!, { principal: 'key:key_demo_brand', filters: { use: 'query-result' } }, wire, t0);
    expect(await openResultCursor(env, principal, token, t0)).toEqual({
      brandId: 'brand_acme',
      jobId: 'job_old',
      location: 'EU',
      offset: 7,
      totalRows: 9,
      expiresAt: t0 + 1000,
      queryId: 'sq_x',
    });
    const reissued = await issueResultCursor(env, principal, await openResultCursor(env, principal, token, t0), t0);
    expect(reissued).toBe(token);
  });

  it('a cursor whose result the warehouse no longer holds is a clear 400, not a 5xx', async () => {
    const principal = acmePrincipal('key_demo_brand');
    const token = await issueResultCursor(
      env,
      principal,
      { brandId: 'brand_acme', jobId: 'job_gone_long_ago', location: 'US', offset: 10, totalRows: 20 },
      Date.now(),
    );
    const err = expectError(await postJson('/v1/data/query/page', 'brand', { cursor: token }), 400, 'VALIDATION');
    expect(err.message).toMatch(/no longer held/);
  });
});

describe('the OpenAPI document agrees', () => {
  it('documents POST /v1/data/query/page and the paging fields of RunQueryResponse', async () => {
    const doc = z
      .object({
        paths: z.record(
          z.string(),
          z.record(z.string(), z.object({ operationId: z.string(), responses: z.record(z.string(), z.unknown()) }).passthrough()),
        ),
        components: z.object({
          schemas: z.record(
            z.string(),
            z.object({ required: z.array(z.string()).optional(), properties: z.record(z.string(), z.unknown()).optional() }).passthrough(),
          ),
        }),
      })
      .parse((await api('/v1/data/openapi.json', null)).body);
    const page = doc.paths['/v1/data/query/page']?.post;
    expect(page?.operationId).toBe('readQueryPage');
    expect(Object.keys(page?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
    expect(doc.components.schemas.QueryPageRequest?.required).toEqual(['cursor']);
    expect(doc.components.schemas.RunQueryResponse?.required).toEqual(
      expect.arrayContaining(['rowCount', 'totalRows', 'nextCursor', 'truncated']),
    );
    expect(Object.keys(doc.components.schemas.RunQueryResponse?.properties ?? {})).toContain('window');
  });
});

describe('say what ran', () => {
  it('a stored query echoes its resolved window (cadence when given, time zone); totalRows on every result', async () => {
    const monthly = Page.parse(
      (await postJson('/v1/data/query', 'brand', { queryId: 'rq_overview_channels', period: { cadence: 'MONTHLY' } })).body,
    );
    expect(monthly.window).toEqual({
      startDate: expect.stringMatching(/^\d{4}-\d{2}-01$/),
      endDate: expect.any(String),
      cadence: 'MONTHLY',
      timezone: 'UTC',
    });
    expect(monthly.totalRows).toBe(monthly.rowCount);
    const fixed = Page.parse(
      (
        await postJson('/v1/data/query', 'brand', {
          queryId: 'rq_overview_channels',
          period: { startDate: '2026-01-01', endDate: '2026-01-31' },
        })
      ).body,
    );
    expect(fixed.window).toEqual({ startDate: '2026-01-01', endDate: '2026-01-31', timezone: 'UTC' });
    const dry = Page.parse((await postJson('/v1/data/query', 'brand', { queryId: 'rq_overview_channels', dryRun: true })).body);
    expect(dry).toMatchObject({ totalRows: 0, nextCursor: null, window: { timezone: 'UTC' } });
    const raw = Page.parse((await postJson('/v1/data/query', 'brand', { sql: `SELECT COUNT(*) AS n FROM ${ORDERS}` })).body);
    expect(raw.window).toBeUndefined();
    expect(raw).toMatchObject({ totalRows: 1, rowCount: 1, nextCursor: null });
  });
});

describe('a typo is not a permission problem', () => {
  it("a table missing from the brand's own dataset is 400 QUERY_FAILED naming the table", async () => {
    const err = expectError(
      await postJson('/v1/data/query', 'brand', { sql: 'SELECT * FROM `service-v1.acme.fact__orderz`' }),
      400,
      'QUERY_FAILED',
    );
    expect(err.message).toContain('service-v1.acme.fact__orderz');
    expect(err.details).toMatchObject({ stage: 'warehouse', reason: 'notFound', table: 'service-v1.acme.fact__orderz' });
    // Another brand's dataset is still the guard's 403, whether or not the table exists.
    expectError(
      await postJson('/v1/data/query', 'brand', { sql: 'SELECT * FROM `service-v1.globex.fact__orderz`' }),
      403,
      'FORBIDDEN_TABLE',
    );
  });
});

describe('dry runs and refused queries are metered', () => {
  it(`past DEFAULT_CHECKS_PER_MINUTE (${env.DEFAULT_CHECKS_PER_MINUTE}) refusals and dry runs: 429 with Retry-After; real runs keep their own budget`, async () => {
    // The operation itself with a fixed clock, so the bucket does not refill while the test runs.
    const background: Promise<unknown>[] = [];
    const principal = acmePrincipal(`key_meter_${marker()}`);
    const T = Date.UTC(2026, 5, 1, 12);
    const ctx = (now: number): OpContext => ({
      env,
      config: configOf(env),
      principal,
      requestId: 'req_meter',
      log: createLogger('req_meter'),
      now,
      transport: 'rest',
      origin: 'http://api.test',
      waitUntil: (p) => void background.push(p),
    });
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'OK',
        (err: unknown) => (err instanceof ApiError ? err : String(err)),
      );
    const perMinute = Number(env.DEFAULT_CHECKS_PER_MINUTE);
    for (let i = 0; i < perMinute - 1; i++) {
      const out = await code(runQuery(ctx(T), { sql: `DELETE FROM ${ORDERS} WHERE ${i} = ${i}` }));
      expect(out).toMatchObject({ code: 'INVALID_SQL' });
    }
    expect(await code(runQuery(ctx(T), { sql: `SELECT revenue FROM ${ORDERS}`, dryRun: true }))).toBe('OK');
    const refused = await code(runQuery(ctx(T), { sql: `SELECT revenue FROM ${ORDERS}`, dryRun: true }));
    expect(refused).toMatchObject({ code: 'USAGE_LIMIT_EXCEEDED', status: 429, details: { limit: 'checks', limitValue: perMinute } });
    expect(refused instanceof ApiError ? refused.headers?.['Retry-After'] : null).toBe(String(Math.ceil(60 / perMinute)));
    // Refused SQL past the rate is refused for the rate, not re-parsed for free.
    expect(await code(runQuery(ctx(T), { sql: `DELETE FROM ${ORDERS} WHERE TRUE` }))).toMatchObject({ code: 'USAGE_LIMIT_EXCEEDED' });
    // A real run whose verdict is cached (the dry run above) needs no warehouse dry run, so it takes no check: it
    // runs, on the 24-hour budget. (A run that needs a warehouse dry run takes a check token: see usage-burst.)
    expect(await code(runQuery(ctx(T), { sql: `SELECT revenue FROM ${ORDERS}` }))).toBe('OK');
    // The bucket refills at perMinute a minute.
    expect(await code(runQuery(ctx(T + 60_000 / perMinute), { sql: `SELECT revenue FROM ${ORDERS}`, dryRun: true }))).toBe('OK');
    await Promise.all(background);
  });

  it("a key's own rates (its api_keys settings) override the defaults", async () => {
    const key = await generateApiKey();
    await env.DB.batch([
      env.DB.prepare('INSERT INTO api_keys (id, name, prefix, secret_hash, brand_id, created_at) VALUES (?, ?, ?, ?, ?, 0)').bind(
        key.id,
        'metered',
        key.prefix,
        key.secretHash,
        'brand_acme',
      ),
      env.DB.prepare('UPDATE api_keys SET checks_per_minute = 2 WHERE id = ?').bind(key.id),
    ]);
    // The principal the Worker serves the key as: its one read of the key, every setting in `limits`.
    const principal = await authenticateApiKey(env, key.secret, Date.now());
    expect(await meterRate(env, principal, 'checks')).toBe(2);
    expect(await meterRate(env, principal, 'pages')).toBe(Number(env.DEFAULT_PAGE_READS_PER_MINUTE));
    expect(await meterRate(env, { ...principal, kind: 'oauth' }, 'checks')).toBe(Number(env.DEFAULT_CHECKS_PER_MINUTE));
    const T = Date.UTC(2026, 5, 2);
    await takeMeter(env, principal, 'checks', T);
    await takeMeter(env, principal, 'checks', T);
    await expect(takeMeter(env, principal, 'checks', T)).rejects.toMatchObject({
      code: 'USAGE_LIMIT_EXCEEDED',
      details: { limit: 'checks', limitValue: 2, retryAfterSeconds: 30 },
      headers: expect.objectContaining({ 'Retry-After': '30' }),
    });
    // The other meter is separate.
    await takeMeter(env, principal, 'pages', T);
  });

  it('the meter is a token bucket: a burst of perMinute, then perMinute a minute', () => {
    let state;
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      const out = takeToken(state, 3, t0);
      expect(out.allowed).toBe(true);
      state = out.state;
    }
    const refused = takeToken(state, 3, t0);
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 20 });
    expect(takeToken(refused.state, 3, t0 + 19_999).allowed).toBe(false);
    expect(takeToken(refused.state, 3, t0 + 20_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(takeToken(refused.state, 3, t0 + 10 * 60_000)).toMatchObject({ allowed: true, remaining: 2 });
  });
});
