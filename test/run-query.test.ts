import { env } from 'cloudflare:test';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { verdictCache } from '../src/features/query/verdict-cache';
import { expectError, postJson, seedDemo } from './seed';
import { RunResultSchema } from './run-query-fixtures';

const RunResponse = RunResultSchema;

const ACME_ORDERS = '`service-v1.acme.fact__orders`';
const GLOBEX_ORDERS = '`service-v1.globex.fact__orders`';

async function logRows(principalId: string) {
  const { results } = await env.DB.prepare(
    'SELECT brand_id, query_id, period, sql, dry_run, outcome, bytes_billed, row_count, request_id FROM query_log WHERE principal_id = ? ORDER BY created_at, rowid',
  )
    .bind(principalId)
    .all<{
      brand_id: string | null;
      query_id: string | null;
      period: string | null;
      sql: string | null;
      dry_run: number;
      outcome: string;
      bytes_billed: number | null;
      row_count: number | null;
      request_id: string;
    }>();
  return results;
}

beforeAll(async () => {
  await seedDemo();
});
beforeEach(async () => {
  verdictCache.clear();
  await env.DB.prepare('DELETE FROM query_log').run();
  await env.DB.prepare('UPDATE api_keys SET max_bytes_billed = NULL, daily_query_limit = NULL, daily_bytes_limit = NULL').run();
});

describe('POST /v1/data/query: raw SQL', () => {
  it('runs a read-only query for the brand key (brand inferred) and returns rows, schema, stats and RateLimit headers', async () => {
    const res = await postJson('/v1/data/query', 'brand', {
      sql: `SELECT channel, COUNT(*) AS orders FROM ${ACME_ORDERS} GROUP BY channel ORDER BY channel`,
    });
    expect(res.status).toBe(200);
    const body = RunResponse.parse(res.body);
    expect(body.brandId).toBe('brand_acme');
    expect(body.rows.map((r) => r.channel)).toEqual(['marketplace', 'store', 'web']);
    expect(body.rowCount).toBe(3);
    expect(body.truncated).toBe(false);
    expect(body.rows.reduce((a, r) => a + Number(r.orders), 0)).toBe(500_000);
    expect(body.schema?.map((f) => [f.name, f.type])).toEqual([
      ['channel', 'STRING'],
      ['orders', 'INTEGER'],
    ]);
    expect(body.stats?.dryRun).toBe(false);
    expect(body.stats?.totalBytesProcessed).toBeGreaterThan(0);
    expect(Number(res.headers.get('RateLimit-Limit'))).toBeGreaterThan(0);
    expect(res.headers.get('RateLimit-Remaining')).toMatch(/^\d+$/);
    expect(res.headers.get('RateLimit-Reset')).toMatch(/^\d+$/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    // usage first appears with the checks token taken before the dry run.
    expect(res.headers.get('Server-Timing')).toMatch(
      /^resolve;dur=[\d.]+, guard;dur=[\d.]+, usage;dur=[\d.]+, dryrun;dur=[\d.]+, warehouse;dur=[\d.]+, total;dur=[\d.]+$/,
    );
    const log = await logRows('key_demo_brand');
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ brand_id: 'brand_acme', outcome: 'OK', row_count: 3, dry_run: 0 });
    expect(log[0]!.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('org keys must name the brand', async () => {
    const err = expectError(
      await postJson('/v1/data/query', 'org', { sql: `SELECT 1 AS x FROM ${ACME_ORDERS} LIMIT 1` }),
      400,
      'VALIDATION',
    );
    expect(err.message).toMatch(/brandId/);
    const ok = await postJson('/v1/data/query', 'org', { sql: `SELECT COUNT(*) AS n FROM ${GLOBEX_ORDERS}`, brandId: 'brand_globex' });
    expect(ok.status).toBe(200);
    expect(RunResponse.parse(ok.body).rows).toEqual([{ n: 20_000 }]);
  });

  it.each([
    ['other org key on brand_acme', 'other', 'brand_acme'],
    ['brand key on a sibling brand', 'brand', 'brand_globex'],
    ['org key on an unknown brand', 'org', 'brand_nope'],
  ] as const)('%s is 403 FORBIDDEN_BRAND', async (_, key, brandId) => {
    expectError(await postJson('/v1/data/query', key, { sql: `SELECT 1 AS x`, brandId }), 403, 'FORBIDDEN_BRAND');
  });

  it('a table of another brand is 403 FORBIDDEN_TABLE, decided by the guard', async () => {
    const err = expectError(await postJson('/v1/data/query', 'brand', { sql: `SELECT * FROM ${GLOBEX_ORDERS}` }), 403, 'FORBIDDEN_TABLE');
    expect(err.details).toMatchObject({ stage: 'guard' });
    // The other tenant's dataset too, through a subquery.
    expectError(
      await postJson('/v1/data/query', 'org', {
        brandId: 'brand_acme',
        sql: `SELECT * FROM ${ACME_ORDERS} WHERE customer_id IN (SELECT customer_id FROM \`service-v1.umbrella.dim__customers\`)`,
      }),
      403,
      'FORBIDDEN_TABLE',
    );
  });

  it.each([
    ['DML', `DELETE FROM ${ACME_ORDERS} WHERE TRUE`],
    ['two statements', `SELECT 1 AS x; SELECT 2 AS y`],
    ['DDL', `DROP TABLE ${ACME_ORDERS}`],
    ['scripting', `DECLARE x INT64 DEFAULT 1`],
  ])('%s is 400 INVALID_SQL from the guard', async (_, sql) => {
    const err = expectError(await postJson('/v1/data/query', 'brand', { sql }), 400, 'INVALID_SQL');
    expect(err.details).toMatchObject({ stage: 'guard' });
  });

  it('a syntax error is 400 QUERY_FAILED with the position', async () => {
    const err = expectError(
      await postJson('/v1/data/query', 'brand', { sql: `SELECT channel,\n  SUM(revenue AS r FROM ${ACME_ORDERS} GROUP BY channel` }),
      400,
      'QUERY_FAILED',
    );
    expect(err.details).toMatchObject({ stage: 'guard', line: 2, column: expect.any(Number) });
  });

  it("the warehouse's own complaint (unknown column) is 400 QUERY_FAILED at stage warehouse", async () => {
    const err = expectError(
      await postJson('/v1/data/query', 'brand', { sql: `SELECT no_such_column FROM ${ACME_ORDERS}` }),
      400,
      'QUERY_FAILED',
    );
    expect(err.details).toMatchObject({ stage: 'warehouse' });
    expect(err.message).toMatch(/no_such_column/);
  });

  it('dryRun validates and estimates without running or counting', async () => {
    const res = await postJson('/v1/data/query', 'brand', { sql: `SELECT revenue FROM ${ACME_ORDERS}`, dryRun: true });
    expect(res.status).toBe(200);
    const body = RunResponse.parse(res.body);
    expect(body).toMatchObject({ brandId: 'brand_acme', rows: [], rowCount: 0, truncated: false });
    expect(body.stats).toMatchObject({ dryRun: true, totalBytesBilled: 0 });
    expect(body.stats!.totalBytesProcessed).toBeGreaterThan(500_000);
    const again = await postJson('/v1/data/query', 'brand', { sql: `SELECT revenue FROM ${ACME_ORDERS}`, dryRun: true });
    expect(again.headers.get('RateLimit-Remaining')).toMatch(/^\d+$/);
    expect(again.headers.get('RateLimit-Remaining')).toBe(res.headers.get('RateLimit-Remaining'));
    expect((await logRows('key_demo_brand'))[0]).toMatchObject({ dry_run: 1, outcome: 'OK', bytes_billed: 0 });
  });

  it('over the per-key byte ceiling is 400 QUERY_TOO_EXPENSIVE before running', async () => {
    await env.DB.prepare("UPDATE api_keys SET max_bytes_billed = 1000 WHERE id = 'key_demo_brand'").run();
    const err = expectError(
      await postJson('/v1/data/query', 'brand', { sql: `SELECT revenue FROM ${ACME_ORDERS}` }),
      400,
      'QUERY_TOO_EXPENSIVE',
    );
    expect(err.details).toMatchObject({ maxBytesBilled: 1000 });
    const log = await logRows('key_demo_brand');
    expect(log[0]).toMatchObject({ outcome: 'QUERY_TOO_EXPENSIVE', row_count: null });
  });

  it('results above the row cap are cut and flagged, never silently', async () => {
    const res = await postJson('/v1/data/query', 'org', {
      brandId: 'brand_globex',
      sql: `SELECT order_id FROM ${GLOBEX_ORDERS} ORDER BY order_id`,
    });
    expect(res.status).toBe(200);
    const body = RunResponse.parse(res.body);
    const cap = Number(env.ROW_CAP);
    expect(body.rowCount).toBe(cap);
    expect(body.rows).toHaveLength(cap);
    expect(body.truncated).toBe(true);
  });

  it('a brand without a dataset is 409 BRAND_NOT_PROVISIONED', async () => {
    expectError(await postJson('/v1/data/query', 'org', { brandId: 'brand_initech', sql: 'SELECT 1 AS x' }), 409, 'BRAND_NOT_PROVISIONED');
  });

  it.each([
    ['both shapes', { sql: 'SELECT 1', queryId: 'sq_acme_monthly_kpis' }, /not both/],
    ['neither shape', { brandId: 'brand_acme' }, /sql or queryId is required/],
    ['unknown property', { sql: 'SELECT 1', limit: 5 }, /limit|unrecognized/i],
    ['empty sql', { sql: '' }, /sql/],
    ['period with raw sql', { sql: 'SELECT 1', period: { cadence: 'DAILY' } }, /period|unrecognized/i],
    ['bad cadence', { queryId: 'rq_overview_kpis', period: { cadence: 'HOURLY' } }, /cadence/],
    ['impossible date', { queryId: 'rq_overview_kpis', period: { startDate: '2026-02-30', endDate: '2026-03-01' } }, /calendar date/],
  ])('%s is 400 VALIDATION', async (_, body, re) => {
    const err = expectError(await postJson('/v1/data/query', 'brand', body), 400, 'VALIDATION');
    expect(err.message).toMatch(re);
  });

  it('refused runs are logged too', async () => {
    await postJson('/v1/data/query', 'brand', { sql: `DELETE FROM ${ACME_ORDERS} WHERE TRUE` });
    await postJson('/v1/data/query', 'brand', { sql: `SELECT * FROM ${GLOBEX_ORDERS}` });
    expect((await logRows('key_demo_brand')).map((r) => r.outcome)).toEqual(['INVALID_SQL', 'FORBIDDEN_TABLE']);
  });
});

describe('POST /v1/data/query: stored queries by id', () => {
  it('a saved query runs as written and infers its brand for an org key', async () => {
    const res = await postJson('/v1/data/query', 'org', { queryId: 'sq_acme_monthly_kpis' });
    expect(res.status).toBe(200);
    const body = RunResponse.parse(res.body);
    expect(body.brandId).toBe('brand_acme');
    expect(body.rowCount).toBeGreaterThan(10);
    expect(Object.keys(body.rows[0]!)).toEqual(['month', 'orders', 'revenue', 'customers', 'aov', 'is_partial_month']);
    // The description's warning ("both are partial months") is in the rows: every month says whether it is one.
    for (const row of body.rows) expect(typeof row.is_partial_month).toBe('boolean');
  });

  it('a period sent to a non-parameterized saved query is refused, not ignored', async () => {
    const err = expectError(
      await postJson('/v1/data/query', 'brand', { queryId: 'sq_acme_monthly_kpis', period: { cadence: 'DAILY' } }),
      400,
      'VALIDATION',
    );
    expect(err.message).toMatch(/not parameterized/);
  });

  it('a system report section fills the brand dataset and the period window', async () => {
    const res = await postJson('/v1/data/query', 'brand', {
      queryId: 'rq_overview_daily',
      period: { startDate: '2026-01-01', endDate: '2026-01-01' },
    });
    expect(res.status).toBe(200);
    const log = await logRows('key_demo_brand');
    expect(log[0]!.sql).toContain('`service-v1.acme.');
    expect(log[0]!.sql).toContain("'2026-01-01'");
    expect(log[0]!.sql).not.toMatch(/\{(dataset|start_date|end_date)\}/);
    expect(JSON.parse(log[0]!.period!)).toEqual({ startDate: '2026-01-01', endDate: '2026-01-01' });
  });

  it('omitted period = last full month; cadence DAILY = yesterday', async () => {
    await postJson('/v1/data/query', 'brand', { queryId: 'rq_overview_daily' });
    await postJson('/v1/data/query', 'brand', { queryId: 'rq_overview_daily', period: { cadence: 'DAILY' } });
    const [monthly, daily] = (await logRows('key_demo_brand')).map((r) => JSON.parse(r.period!) as { startDate: string; endDate: string });
    const today = new Date();
    const firstOfThis = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1));
    const lastOfPrev = new Date(firstOfThis.getTime() - 86_400_000);
    expect(monthly!.endDate).toBe(lastOfPrev.toISOString().slice(0, 10));
    expect(monthly!.startDate).toBe(lastOfPrev.toISOString().slice(0, 8) + '01');
    const yesterday = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - 86_400_000)
      .toISOString()
      .slice(0, 10);
    expect(daily).toEqual({ startDate: yesterday, endDate: yesterday });
  });

  it('a system section needs brandId from an org key, and runs against that brand', async () => {
    expectError(await postJson('/v1/data/query', 'org', { queryId: 'rq_overview_kpis' }), 400, 'VALIDATION');
    const res = await postJson('/v1/data/query', 'org', { queryId: 'rq_overview_kpis', brandId: 'brand_globex' });
    expect(res.status).toBe(200);
    expect(RunResponse.parse(res.body).brandId).toBe('brand_globex');
  });

  it.each([
    ['unknown id', 'brand', { queryId: 'rq_does_not_exist' }],
    ["another tenant's saved query", 'other', { queryId: 'sq_acme_monthly_kpis' }],
    ["a sibling brand's saved query from a brand key", 'brand', { queryId: 'sq_globex_monthly_kpis' }],
    ["another org's org report section", 'other', { queryId: 'rq_mix_share', brandId: 'brand_umbrella' }],
    ['a saved query named with the wrong brand', 'org', { queryId: 'sq_acme_monthly_kpis', brandId: 'brand_globex' }],
  ] as const)('%s is 404 QUERY_NOT_FOUND', async (_, key, body) => {
    expectError(await postJson('/v1/data/query', key, body), 404, 'QUERY_NOT_FOUND');
  });
});

describe('POST /v1/data/query: daily usage limit', () => {
  it('the run past the limit is 429 with Retry-After; dry runs and refusals do not count', async () => {
    await env.DB.prepare("UPDATE api_keys SET daily_query_limit = 2 WHERE id = 'key_other_org'").run();
    const sql = 'SELECT COUNT(*) AS n FROM `service-v1.umbrella.dim__customers`';
    expect((await postJson('/v1/data/query', 'other', { sql, brandId: 'brand_umbrella', dryRun: true })).status).toBe(200);
    expectError(
      await postJson('/v1/data/query', 'other', { sql: 'DELETE FROM x WHERE TRUE', brandId: 'brand_umbrella' }),
      400,
      'INVALID_SQL',
    );
    const first = await postJson('/v1/data/query', 'other', { sql, brandId: 'brand_umbrella' });
    expect(first.status).toBe(200);
    expect(first.headers.get('RateLimit-Remaining')).toBe('1');
    expect((await postJson('/v1/data/query', 'other', { sql, brandId: 'brand_umbrella' })).status).toBe(200);
    const third = await postJson('/v1/data/query', 'other', { sql, brandId: 'brand_umbrella' });
    const err = expectError(third, 429, 'USAGE_LIMIT_EXCEEDED');
    expect(Number(third.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(err.details).toMatchObject({ limit: 'runs' });
  });
});
