import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY_IDS } from '../src/seed/demo-tenants';
import { api, expectError, seedDemo, TEST_KEYS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

// Every brand says its time zone (UTC: none set in the demo) and whether it can be queried (a dataset exists).
const ACME = { brandId: 'brand_acme', name: 'Acme Outdoor', dataset: 'acme', timezone: 'UTC', queryable: true };
const GLOBEX = { brandId: 'brand_globex', name: 'Globex Coffee', dataset: 'globex', timezone: 'UTC', queryable: true };
const INITECH = { brandId: 'brand_initech', name: 'Initech Labs', dataset: null, timezone: 'UTC', queryable: false };
const UMBRELLA = { brandId: 'brand_umbrella', name: 'Umbrella Health', dataset: 'umbrella', timezone: 'UTC', queryable: true };

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
