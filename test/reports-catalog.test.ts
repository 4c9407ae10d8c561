import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword, hashPassword, PASSWORD_ITERATIONS } from '../src/auth/passwords';
import { assertKnownSlots, fillTemplate, KNOWN_SLOTS, templateSlots } from '../src/catalog/template';
import { QueryListSchema } from '../src/schemas/catalog';
import { buildDemoSeed, type DemoSeedInput } from '../src/seed/demo-tenants';
import { DEMO_CATALOG_FILES } from './demo-catalog';
import { api, seedDemo, TEST_ADMINS, TEST_KEYS } from './seed';

/** The demo catalog of docs/demo-data.md as seeded: templates, saved queries, tenants, keys and admins. */

const INPUT: DemoSeedInput = {
  now: Date.UTC(2026, 10, 21),
  keys: { ...TEST_KEYS },
  admins: { org: { ...TEST_ADMINS.org }, brand: { ...TEST_ADMINS.brand } },
  catalog: DEMO_CATALOG_FILES,
};

/** The demo folder with one more file. */
const withFile = (path: string, value: unknown): DemoSeedInput => ({
  ...INPUT,
  catalog: [...DEMO_CATALOG_FILES, { path, text: JSON.stringify(value, null, 2) }],
});

async function counts() {
  const tables = ['organizations', 'brands', 'api_keys', 'users', 'memberships', 'reports', 'report_queries', 'saved_queries'];
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = (await env.DB.prepare(`SELECT count(*) AS n FROM ${t}`).first<{ n: number }>())?.n ?? -1;
  return out;
}

beforeAll(async () => {
  await seedDemo(INPUT.now);
});

describe('template slots', () => {
  it('lists slot names once each, in order of first use, ignoring braces that are not slots', () => {
    expect(templateSlots("SELECT '{end_date}', x FROM `p.{dataset}.t` WHERE d >= '{start_date}' AND d <= '{end_date}'")).toEqual([
      'end_date',
      'dataset',
      'start_date',
    ]);
    expect(templateSlots("SELECT JSON '{\"a\": 1}', REGEXP_CONTAINS(x, r'a{2,3}') FROM t")).toEqual([]);
    expect(KNOWN_SLOTS).toEqual(['dataset', 'start_date', 'end_date']);
  });

  it('refuses a template with an unknown slot, naming it', () => {
    expect(() => assertKnownSlots('SELECT * FROM `service-v1.{dataset}.t` WHERE brand = {brand_id}')).toThrow(
      /unknown slot\(s\) \{brand_id\}/,
    );
    expect(assertKnownSlots("SELECT 1 FROM `service-v1.{dataset}.t` WHERE d = DATE '{start_date}'")).toEqual(['dataset', 'start_date']);
  });

  it('fills slots only with values of the right shape', () => {
    const sql = "SELECT * FROM `service-v1.{dataset}.fact__orders` WHERE order_date BETWEEN DATE '{start_date}' AND DATE '{end_date}'";
    expect(fillTemplate(sql, { dataset: 'acme', start_date: '2026-10-01', end_date: '2026-10-31' })).toBe(
      "SELECT * FROM `service-v1.acme.fact__orders` WHERE order_date BETWEEN DATE '2026-10-01' AND DATE '2026-10-31'",
    );
    expect(() => fillTemplate(sql, { dataset: 'acme', start_date: '2026-10-01' })).toThrow(/end_date/);
    expect(() => fillTemplate(sql, { dataset: 'acme`; DROP', start_date: '2026-10-01', end_date: '2026-10-31' })).toThrow(/dataset/);
    expect(() => fillTemplate(sql, { dataset: 'acme', start_date: "2026-10-01' OR '1'='1", end_date: '2026-10-31' })).toThrow(/start_date/);
  });
});

describe('demo seed', () => {
  it('refuses a catalog template with an unknown slot at seed time', async () => {
    const bad = {
      id: 'rpt_bad',
      owner: 'system',
      name: 'Bad',
      sections: [{ id: 'rq_bad', name: 'Bad', description: 'x', sql: 'SELECT * FROM `service-v1.{dataset}.t` WHERE x = {region}' }],
    };
    await expect(buildDemoSeed(withFile('reports/rpt_bad.json', bad))).rejects.toThrow(
      /reports\/rpt_bad\.json:\d+: report rpt_bad section rq_bad: .*\{region\}/,
    );
  });

  it('refuses key secrets the Worker would never accept', async () => {
    await expect(buildDemoSeed({ ...INPUT, keys: { ...INPUT.keys, org: 'not-a-key' } })).rejects.toThrow(/wqk_/);
    await expect(buildDemoSeed({ ...INPUT, keys: { ...INPUT.keys, other: INPUT.keys.org } })).rejects.toThrow(/distinct/);
  });

  it('quotes every value as a literal (names with quotes survive the round trip)', async () => {
    const quoted = {
      id: 'rpt_quote_test',
      owner: 'brand:brand_acme',
      name: "O'Brien's report; DROP TABLE reports; --",
      description: "it's",
      dashboardConfig: { layout: 'stack', tiles: [] },
      sections: [],
    };
    const stmts = await buildDemoSeed(withFile('reports/rpt_quote_test.json', quoted));
    await env.DB.batch(stmts.map((s) => env.DB.prepare(s)));
    const row = await env.DB.prepare('SELECT name, description, dashboard_config FROM reports WHERE id = ?').bind('rpt_quote_test').first();
    expect(row).toEqual({ name: quoted.name, description: "it's", dashboard_config: '{"layout":"stack","tiles":[]}' });
    expect((await counts()).reports).toBeGreaterThan(1);
    await env.DB.prepare('DELETE FROM reports WHERE id = ?').bind('rpt_quote_test').run();
  });

  it('is idempotent: applying it again, on a later day, changes no counts and no stored row', async () => {
    const before = await counts();
    expect(before).toEqual({
      organizations: 2,
      brands: 4,
      api_keys: 3,
      users: 2,
      memberships: 2,
      reports: 7,
      report_queries: 14,
      saved_queries: 7,
    });
    await seedDemo(INPUT.now);
    await seedDemo(Date.UTC(2026, 11, 3));
    expect(await counts()).toEqual(before);
    // created_at stays that of the first application.
    const org = await env.DB.prepare('SELECT created_at FROM organizations WHERE id = ?').bind('org_demo').first();
    expect(org).toEqual({ created_at: INPUT.now });
  });

  it("only adds what is missing: an operator's revocation, limits and names survive a reseed, deleted rows come back", async () => {
    const revokedAt = INPUT.now + 60_000;
    await env.DB.batch([
      env.DB.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').bind(revokedAt, 'key_demo_brand'),
      env.DB.prepare('UPDATE api_keys SET daily_query_limit = 7, max_bytes_billed = 1048576 WHERE id = ?').bind('key_demo_org'),
      env.DB.prepare('UPDATE brands SET name = ? WHERE id = ?').bind('Acme Outdoor & Co', 'brand_acme'),
      env.DB.prepare('UPDATE users SET failed_logins = 3 WHERE id = ?').bind('user_demo_org_admin'),
      env.DB.prepare("DELETE FROM report_queries WHERE id = 'rq_acme_range'"),
      env.DB.prepare("DELETE FROM saved_queries WHERE id = 'sq_globex_monthly_kpis'"),
    ]);
    const before = await counts();
    expect(before).toMatchObject({ report_queries: 13, saved_queries: 6 });

    await seedDemo(Date.UTC(2026, 11, 3));
    const keys = await env.DB.prepare('SELECT id, revoked_at, daily_query_limit, max_bytes_billed FROM api_keys ORDER BY id').all();
    expect(keys.results).toEqual([
      { id: 'key_demo_brand', revoked_at: revokedAt, daily_query_limit: null, max_bytes_billed: null },
      { id: 'key_demo_org', revoked_at: null, daily_query_limit: 7, max_bytes_billed: 1048576 },
      { id: 'key_other_org', revoked_at: null, daily_query_limit: null, max_bytes_billed: null },
    ]);
    expect(await env.DB.prepare("SELECT name FROM brands WHERE id = 'brand_acme'").first()).toEqual({ name: 'Acme Outdoor & Co' });
    expect(await env.DB.prepare("SELECT failed_logins FROM users WHERE id = 'user_demo_org_admin'").first()).toEqual({ failed_logins: 3 });
    expect(await counts()).toEqual({ ...before, report_queries: 14, saved_queries: 7 });
    // The revoked key stays refused; the re-added rows are the seed's.
    expect((await api('/v1/data/brands', 'brand')).status).toBe(401);
    expect(await env.DB.prepare("SELECT ordinal FROM report_queries WHERE id = 'rq_acme_range'").first()).toEqual({ ordinal: 3 });

    // Back to the seed's values for the tests below.
    await env.DB.batch([
      env.DB.prepare('UPDATE api_keys SET revoked_at = NULL, daily_query_limit = NULL, max_bytes_billed = NULL'),
      env.DB.prepare("UPDATE brands SET name = 'Acme Outdoor' WHERE id = 'brand_acme'"),
      env.DB.prepare('UPDATE users SET failed_logins = 0'),
    ]);
  });

  it('has the tenants of docs/demo-data.md', async () => {
    const { results: orgs } = await env.DB.prepare('SELECT id, name FROM organizations ORDER BY id').all();
    expect(orgs).toEqual([
      { id: 'org_demo', name: 'Demo Retail Group' },
      { id: 'org_other', name: 'Other Co' },
    ]);
    const { results: brands } = await env.DB.prepare('SELECT id, org_id, name, dataset FROM brands ORDER BY id').all();
    expect(brands).toEqual([
      { id: 'brand_acme', org_id: 'org_demo', name: 'Acme Outdoor', dataset: 'acme' },
      { id: 'brand_globex', org_id: 'org_demo', name: 'Globex Coffee', dataset: 'globex' },
      { id: 'brand_initech', org_id: 'org_demo', name: 'Initech Labs', dataset: null },
      { id: 'brand_umbrella', org_id: 'org_other', name: 'Umbrella Health', dataset: 'umbrella' },
    ]);
  });

  it('stores only hashes of the key secrets, with a visible prefix, and each key authenticates with its scope', async () => {
    const { results } = await env.DB.prepare(
      'SELECT id, prefix, secret_hash, org_id, brand_id, revoked_at FROM api_keys ORDER BY id',
    ).all();
    expect(results.map((r) => [r.id, r.org_id, r.brand_id, r.revoked_at])).toEqual([
      ['key_demo_brand', null, 'brand_acme', null],
      ['key_demo_org', 'org_demo', null, null],
      ['key_other_org', 'org_other', null, null],
    ]);
    const dump = JSON.stringify(results);
    for (const secret of Object.values(TEST_KEYS)) expect(dump).not.toContain(secret);
    expect(results.every((r) => typeof r.prefix === 'string' && r.prefix.startsWith('wqk_') && r.prefix.length === 12)).toBe(true);
    for (const [key, expected] of [
      ['org', ['brand_acme', 'brand_globex', 'brand_initech']],
      ['brand', ['brand_acme']],
      ['other', ['brand_umbrella']],
    ] as const) {
      const res = await api('/v1/data/brands', key);
      expect(res.body).toMatchObject({ brands: expected.map((brandId) => ({ brandId })) });
    }
  });

  it('creates the two admins with PBKDF2 password hashes that verify, and their memberships', async () => {
    const { results } = await env.DB.prepare(
      `SELECT u.email, u.password_hash, u.password_salt, u.password_iterations, m.org_id, m.brand_id
         FROM users u JOIN memberships m ON m.user_id = u.id ORDER BY u.email`,
    ).all<{
      email: string;
      password_hash: string;
      password_salt: string;
      password_iterations: number;
      org_id: string | null;
      brand_id: string | null;
    }>();
    expect(results.map((r) => [r.email, r.org_id, r.brand_id])).toEqual([
      [TEST_ADMINS.brand.email, null, 'brand_acme'],
      [TEST_ADMINS.org.email, 'org_demo', null],
    ]);
    for (const r of results) {
      const stored = { hash: r.password_hash, salt: r.password_salt, iterations: r.password_iterations };
      expect(stored.iterations).toBe(PASSWORD_ITERATIONS);
      expect(stored.salt).toMatch(/^[0-9a-f]{32}$/);
      expect(stored.hash).toMatch(/^[0-9a-f]{64}$/);
      const password = r.email === TEST_ADMINS.org.email ? TEST_ADMINS.org.password : TEST_ADMINS.brand.password;
      expect(await verifyPassword(password, stored)).toBe(true);
      expect(await verifyPassword(`${password}x`, stored)).toBe(false);
    }
  });

  it('has a system report with >= 3 sections using all three slots over demo tables, and >= 2 saved queries per provisioned brand', async () => {
    const { queries } = QueryListSchema.parse((await api('/v1/data/reports/rpt_business_overview/queries', 'brand')).body);
    expect(queries.length).toBeGreaterThanOrEqual(3);
    for (const q of queries) {
      expect(q.parameters).toEqual(['dataset', 'start_date', 'end_date']);
      expect(q.sql).toMatch(/`service-v1\.\{dataset\}\.(fact__orders|dim__products|agg__daily_revenue)`/);
    }
    const { results } = await env.DB.prepare(
      `SELECT b.id, count(s.id) AS n FROM brands b LEFT JOIN saved_queries s ON s.brand_id = b.id
        WHERE b.dataset IS NOT NULL GROUP BY b.id ORDER BY b.id`,
    ).all<{ id: string; n: number }>();
    expect(results.map((r) => r.id)).toEqual(['brand_acme', 'brand_globex', 'brand_umbrella']);
    for (const r of results) expect(r.n).toBeGreaterThanOrEqual(2);
  });

  it("stores each section's parameters as its template slots", async () => {
    const { results } = await env.DB.prepare('SELECT sql_template, parameters FROM report_queries').all<{
      sql_template: string;
      parameters: string;
    }>();
    expect(results).toHaveLength(14);
    for (const r of results) expect(JSON.parse(r.parameters)).toEqual(templateSlots(r.sql_template));
  });
});

describe('passwords', () => {
  it('derives the same hash for the same salt and a different one for another salt', async () => {
    const a = await hashPassword('correct horse', { salt: '00112233445566778899aabbccddeeff', iterations: 1000 });
    const b = await hashPassword('correct horse', { salt: '00112233445566778899aabbccddeeff', iterations: 1000 });
    const c = await hashPassword('correct horse', { iterations: 1000 });
    expect(a).toEqual(b);
    expect(c.salt).not.toBe(a.salt);
    expect(c.hash).not.toBe(a.hash);
    expect(await verifyPassword('correct horse', c)).toBe(true);
  });

  it('rejects malformed stored values instead of throwing', async () => {
    expect(await verifyPassword('x', { hash: 'zz', salt: '00', iterations: 1000 })).toBe(false);
    expect(await verifyPassword('x', { hash: '00', salt: '00', iterations: 0 })).toBe(false);
  });
});
