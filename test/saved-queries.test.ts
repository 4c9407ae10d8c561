import { beforeAll, describe, expect, it } from 'vitest';
import { QueryListSchema } from '../src/schemas/catalog';
import { api, expectError, postJson, seedDemo, type TestKey } from './seed';

beforeAll(async () => {
  await seedDemo(Date.UTC(2026, 10, 21, 12));
});

async function ids(key: TestKey, query = '') {
  const res = await api(`/v1/data/queries${query}`, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return QueryListSchema.parse(res.body).queries.map((q) => q.id);
}

describe('GET /v1/data/queries', () => {
  it('returns concrete saved queries with the spec fields for the brand key', async () => {
    const res = await api('/v1/data/queries', 'brand');
    expect(res.status).toBe(200);
    const { queries } = QueryListSchema.parse(res.body);
    expect(queries.map((q) => q.id)).toEqual(['sq_acme_monthly_kpis', 'sq_acme_channels_last_month', 'sq_acme_top_customers']);
    const channels = queries.find((q) => q.id === 'sq_acme_channels_last_month');
    // Exact object: no ordinal / narrativeHints / chartSpec on saved queries.
    expect(channels).toEqual({
      id: 'sq_acme_channels_last_month',
      name: 'Revenue by channel, last full month',
      description: 'Orders and revenue per channel over the last full calendar month (UTC) before the day it runs.',
      sql:
        'SELECT channel, COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue\nFROM `service-v1.acme.fact__orders`\n' +
        'WHERE order_date BETWEEN DATE_TRUNC(DATE_SUB(CURRENT_DATE(), INTERVAL 1 MONTH), MONTH)\n' +
        '  AND LAST_DAY(DATE_SUB(CURRENT_DATE(), INTERVAL 1 MONTH))\nGROUP BY channel\nORDER BY revenue DESC',
      tables: ['service-v1.acme.fact__orders'],
      parameterized: false,
      parameters: [],
      brandId: 'brand_acme',
    });
    for (const q of queries) {
      expect(q.sql).not.toMatch(/\{[a-z_]+\}/);
      expect(q.sql).toContain('`service-v1.acme.');
      expect(q.tables?.length).toBeGreaterThan(0);
    }
  });

  it('narrows an org key to one brand, or lists every brand it reaches when brandId is omitted', async () => {
    expect(await ids('org', '?brandId=brand_globex')).toEqual(['sq_globex_monthly_kpis', 'sq_globex_channels_last_month']);
    expect(await ids('org', '?brandId=brand_initech')).toEqual([]);
    expect(await ids('org')).toEqual([
      'sq_acme_monthly_kpis',
      'sq_acme_channels_last_month',
      'sq_acme_top_customers',
      'sq_globex_monthly_kpis',
      'sq_globex_channels_last_month',
    ]);
  });

  it('names the owning brand on every item, so an org key listing all its brands can tell whose each query is', async () => {
    const res = await api('/v1/data/queries', 'org');
    const owners = QueryListSchema.parse(res.body).queries.map((q) => [q.id, q.brandId]);
    expect(owners).toEqual([
      ['sq_acme_monthly_kpis', 'brand_acme'],
      ['sq_acme_channels_last_month', 'brand_acme'],
      ['sq_acme_top_customers', 'brand_acme'],
      ['sq_globex_monthly_kpis', 'brand_globex'],
      ['sq_globex_channels_last_month', 'brand_globex'],
    ]);
    // The id runs against the brand the item names, without brandId.
    const run = await postJson('/v1/data/query', 'org', { queryId: 'sq_globex_monthly_kpis', dryRun: true });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body).toMatchObject({ brandId: 'brand_globex' });
  });

  it("keeps the other org's queries to itself", async () => {
    expect(await ids('other')).toEqual(['sq_umbrella_monthly_kpis', 'sq_umbrella_channels_last_month']);
  });

  it('403 FORBIDDEN_BRAND outside the key; 401 without one; 400 for an empty brandId', async () => {
    expectError(await api('/v1/data/queries?brandId=brand_umbrella', 'org'), 403, 'FORBIDDEN_BRAND');
    expectError(await api('/v1/data/queries?brandId=brand_globex', 'brand'), 403, 'FORBIDDEN_BRAND');
    expectError(await api('/v1/data/queries?brandId=brand_acme', 'other'), 403, 'FORBIDDEN_BRAND');
    expectError(await api('/v1/data/queries', null), 401, 'UNAUTHORIZED');
    const err = expectError(await api('/v1/data/queries?brandId=', 'org'), 400, 'VALIDATION');
    expect(err.message).toMatch(/brandId/);
  });
});
