import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_KEY_IDS } from '../src/seed/demo-tenants';
import { DEMO_BRAND_LISTING, DEMO_COVERAGE } from './demo-model';
import { api, expectError, postJson, seedDemo, TEST_KEYS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

const { brand_acme: ACME, brand_globex: GLOBEX, brand_initech: INITECH, brand_umbrella: UMBRELLA } = DEMO_BRAND_LISTING;

describe('GET /v1/data/brands', () => {
  it.each([
    ['org', [ACME, GLOBEX, INITECH]],
    ['brand', [ACME]],
    ['other', [UMBRELLA]],
  ] as const)('lists exactly the brands the %s key can access, dataset null when unprovisioned', async (key, brands) => {
    const res = await api('/v1/data/brands', key);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.body).toEqual({ brands });
  });

  it.each([
    ['no Authorization header', undefined],
    ['a non-bearer scheme', `Basic ${btoa('user:pass')}`],
    ['an empty bearer', 'Bearer '],
    ['an unknown key', 'Bearer wqk_unknownunknownunknownunknownunknown000'],
    ['a key without our prefix', 'Bearer sk_live_0123456789abcdef0123456789abcdef'],
    ['an oversized token', 'Bearer wqk_' + 'a'.repeat(300)],
  ])('401 UNAUTHORIZED with %s', async (_name, authorization) => {
    const res = await api('/v1/data/brands', null, { headers: authorization === undefined ? {} : { authorization } });
    const err = expectError(res, 401, 'UNAUTHORIZED');
    expect(err.message).toMatch(/Bearer/);
  });

  it('401 UNAUTHORIZED at once for a revoked key, other keys unaffected', async () => {
    await env.DB.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').bind(Date.now(), DEMO_KEY_IDS.brand).run();
    try {
      expectError(await api('/v1/data/brands', 'brand'), 401, 'UNAUTHORIZED');
      expect((await api('/v1/data/brands', 'org')).status).toBe(200);
    } finally {
      await env.DB.prepare('UPDATE api_keys SET revoked_at = NULL WHERE id = ?').bind(DEMO_KEY_IDS.brand).run();
    }
    expect((await api('/v1/data/brands', 'brand')).status).toBe(200);
  });

  it('accepts the bearer scheme case-insensitively', async () => {
    const res = await api('/v1/data/brands', null, { headers: { authorization: `bearer ${TEST_KEYS.other}` } });
    expect(res.body).toEqual({ brands: [UMBRELLA] });
  });
});

describe('brand facts', () => {
  it("says the brand's own time zone when it has one (the zone stored-query periods use)", async () => {
    await env.DB.prepare("UPDATE brands SET timezone = 'Europe/Berlin' WHERE id = 'brand_acme'").run();
    try {
      const res = await api('/v1/data/brands', 'brand');
      expect(res.body).toEqual({ brands: [{ ...ACME, timezone: 'Europe/Berlin' }] });
    } finally {
      await env.DB.prepare("UPDATE brands SET timezone = NULL WHERE id = 'brand_acme'").run();
    }
  });
});

/** Runs left in the brand key's rolling budget, as a dry run reports it (a dry run counts no run). */
async function runsLeft(): Promise<number> {
  const res = await postJson('/v1/data/query', 'brand', { sql: 'SELECT 1 AS one', dryRun: true });
  expect(res.status).toBe(200);
  return Number(res.headers.get('RateLimit-Remaining'));
}

describe('currency and data coverage', () => {
  it("the currency is the brand's setting, and the demo's agrees with the warehouse's currency column", async () => {
    for (const [key, brand, dataset] of [
      ['brand', ACME, 'acme'],
      ['other', UMBRELLA, 'umbrella'],
    ] as const) {
      const run = await postJson('/v1/data/query', key, {
        sql: `SELECT DISTINCT currency FROM \`service-v1.${dataset}.fact__orders\``,
        brandId: brand.brandId,
      });
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ rows: [{ currency: brand.currency }] });
    }
    await env.DB.prepare("UPDATE brands SET currency = 'CAD' WHERE id = 'brand_acme'").run();
    try {
      expect((await api('/v1/data/brands', 'brand')).body).toEqual({ brands: [{ ...ACME, currency: 'CAD' }] });
    } finally {
      await env.DB.prepare("UPDATE brands SET currency = 'USD' WHERE id = 'brand_acme'").run();
    }
  });

  it('coverage is the first and last day of the orders, as a query finds them; listing spends no run', async () => {
    const run = await postJson('/v1/data/query', 'brand', {
      sql: 'SELECT CAST(MIN(order_date) AS STRING) AS first, CAST(MAX(order_date) AS STRING) AS last FROM `service-v1.acme.fact__orders`',
    });
    expect(run.body).toMatchObject({ rows: [{ first: DEMO_COVERAGE.firstDay, last: DEMO_COVERAGE.lastDay }] });
    const before = await runsLeft();
    for (let i = 0; i < 3; i++) expect((await api('/v1/data/brands', 'brand')).body).toEqual({ brands: [ACME] });
    expect(await runsLeft()).toBe(before);
    // Read from tables.list (its labels), not from a query.
    const res = await fetch(`${env.BIGQUERY_API_BASE}/__requests?${new URLSearchParams({ op: 'tablesList', limit: '500' })}`);
    const { requests } = (await res.json()) as { requests: { path: string }[] };
    expect(requests.some((r) => r.path.endsWith('/datasets/acme/tables'))).toBe(true);
  });
});

describe('coverage when the warehouse cannot say', () => {
  it('a dataset the warehouse fails on lists with coverage null (logged), the other brands as usual', async () => {
    await env.DB.prepare("UPDATE brands SET dataset = 'initech_down' WHERE id = 'brand_initech'").run();
    const armed = await fetch(`${env.BIGQUERY_API_BASE}/__faults`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'http503', persistent: true, match: { path: '/datasets/initech_down/tables' } }),
    });
    const { id } = (await armed.json()) as { id: string };
    try {
      const res = await api('/v1/data/brands', 'org');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ brands: [ACME, GLOBEX, { ...INITECH, dataset: 'initech_down', queryable: true, coverage: null }] });
    } finally {
      await fetch(`${env.BIGQUERY_API_BASE}/__faults/${id}`, { method: 'DELETE' });
      await env.DB.prepare("UPDATE brands SET dataset = NULL WHERE id = 'brand_initech'").run();
    }
  });
});
