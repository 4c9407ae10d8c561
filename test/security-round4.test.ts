// Security round 4 (issue 33), the console's findings: who a run and a report belong to is decided once, from what
// was verified (rowOwner), and what an administrator sees is decided once (visibleSql, src/auth/ownership.ts); CSV
// cells are always safe. Each attack of the round is replayed as described, through REST, MCP and the admin pages,
// and checked against the stored rows. (The refresh-token forgery: oauth-refresh-forgery.test.ts; the canonical
// path: canonical-path.test.ts.)
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { csvField, loadTotals } from '../src/features/query-history/history';
import { visibilityOf } from '../src/auth/ownership';
import type { Catalog } from '../src/features/catalog-files/format';
import type { CatalogPlan } from '../src/features/catalog-files/plan';
import { recordVersionStatements, versionOrgs } from '../src/features/catalog-files/versions';
import { loadAdminReach } from '../src/auth/oauth-principal';
import { DEMO_KEY_IDS } from '../src/seed/demo-tenants';
import { page, signedIn } from './admin-client';
import { addUser, connectAssistant, mcpClient, type TestBrowser } from './oauth-client';
import { expectError, postJson, seedDemo, TEST_ADMINS, TEST_KEYS } from './seed';

const OTHER_ADMIN = { email: 'other-admin@ownership.test', password: 'other-admin-password-1' };
const TWO_ORG_ADMIN = { email: 'two-orgs@ownership.test', password: 'two-orgs-password-1' };

let browsers: { org: TestBrowser; brand: TestBrowser; other: TestBrowser };

beforeAll(async () => {
  await seedDemo();
  await addUser('user_other_admin', OTHER_ADMIN.email, OTHER_ADMIN.password);
  await addUser('user_two_orgs', TWO_ORG_ADMIN.email, TWO_ORG_ADMIN.password);
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO memberships (user_id, org_id, brand_id, role, created_at) VALUES ('user_other_admin', 'org_other', NULL, 'admin', 0)`,
    ),
    // An administrator of one brand in each organization: an OAuth principal with no single org.
    env.DB.prepare(
      `INSERT INTO memberships (user_id, org_id, brand_id, role, created_at) VALUES ('user_two_orgs', NULL, 'brand_globex', 'admin', 0),
         ('user_two_orgs', NULL, 'brand_umbrella', 'admin', 0)`,
    ),
  ]);
  browsers = {
    org: await signedIn(TEST_ADMINS.org, '198.51.100.61'),
    brand: await signedIn(TEST_ADMINS.brand, '198.51.100.62'),
    other: await signedIn(OTHER_ADMIN, '198.51.100.63'),
  };
}, 60_000);

async function logRow(marker: string) {
  return env.DB.prepare('SELECT org_id, brand_id, principal_id, outcome FROM query_log WHERE sql LIKE ?')
    .bind(`%${marker}%`)
    .first<{ org_id: string | null; brand_id: string | null; principal_id: string; outcome: string }>();
}

async function totalsOf(email: string) {
  const user = await env.DB.prepare('SELECT id FROM users WHERE email = ?').bind(email).first<{ id: string }>();
  const reach = await loadAdminReach(env, user!.id);
  return loadTotals(env, visibilityOf(reach!), Date.now());
}

describe('a refused run is logged under the caller’s own organization, never under the brand it asked for', () => {
  it('REST: org_other’s key asking for brand_acme is the other org’s row, in its history, CSV and totals only', async () => {
    const marker = 'refused_rest_probe';
    expectError(
      await postJson('/v1/data/query', 'other', { brandId: 'brand_acme', sql: `SELECT '${marker}' AS anything` }),
      403,
      'FORBIDDEN_BRAND',
    );
    expect(await logRow(marker)).toEqual({
      org_id: 'org_other',
      brand_id: null,
      principal_id: DEMO_KEY_IDS.other,
      outcome: 'FORBIDDEN_BRAND',
    });

    for (const who of ['org', 'brand'] as const) {
      expect(await page(browsers[who], '/admin/history')).not.toContain(marker);
      expect(await (await browsers[who].get('/admin/history.csv')).text()).not.toContain(marker);
    }
    expect(await page(browsers.other, '/admin/history')).toContain(marker);
    expect(await (await browsers.other.get('/admin/history.csv')).text()).toContain(marker);
    // Per-caller totals: org_demo's administrators are not shown org_other's key at all.
    expect((await totalsOf(TEST_ADMINS.org.email)).callers.map((c) => c.id)).not.toContain(DEMO_KEY_IDS.other);
    expect((await totalsOf(OTHER_ADMIN.email)).callers.map((c) => c.id)).toContain(DEMO_KEY_IDS.other);
  });

  it('MCP run_query, raw SQL and a stored queryId, ends the same way', async () => {
    const client = await mcpClient(TEST_KEYS.other);
    const raw = await client.callTool({ name: 'run_query', arguments: { brandId: 'brand_acme', sql: "SELECT 'refused_mcp_probe' AS x" } });
    expect(raw.isError).toBe(true);
    expect(JSON.stringify(raw.content)).toContain('FORBIDDEN_BRAND');
    const stored = await client.callTool({ name: 'run_query', arguments: { brandId: 'brand_acme', queryId: 'sq_acme_top_customers' } });
    expect(stored.isError).toBe(true);
    expect(JSON.stringify(stored.content)).toContain('FORBIDDEN_BRAND');
    await client.close();

    expect(await logRow('refused_mcp_probe')).toMatchObject({ org_id: 'org_other', brand_id: null, outcome: 'FORBIDDEN_BRAND' });
    const storedRow = await env.DB.prepare(
      "SELECT org_id, brand_id, outcome FROM query_log WHERE query_id = 'sq_acme_top_customers' AND principal_id = ?",
    )
      .bind(DEMO_KEY_IDS.other)
      .first();
    expect(storedRow).toEqual({ org_id: 'org_other', brand_id: null, outcome: 'FORBIDDEN_BRAND' });
    const orgHistory = await page(browsers.org, '/admin/history');
    expect(orgHistory).not.toContain('refused_mcp_probe');
    expect(await page(browsers.org, '/admin/history?query=sq_acme_top_customers')).not.toContain(DEMO_KEY_IDS.other);
    expect(await page(browsers.other, '/admin/history')).toContain('refused_mcp_probe');
  });

  it('a run that passed the brand check is the brand’s row, under the brand’s org, even for a caller spanning two orgs', async () => {
    const { tokens } = await connectAssistant(TWO_ORG_ADMIN);
    const client = await mcpClient(tokens.access_token);
    const ran = await client.callTool({ name: 'run_query', arguments: { brandId: 'brand_umbrella', sql: "SELECT 'two_org_run' AS x" } });
    expect(ran.isError ?? false).toBe(false);
    await client.close();
    expect(await logRow('two_org_run')).toMatchObject({ org_id: 'org_other', brand_id: 'brand_umbrella', outcome: 'OK' });
    expect(await page(browsers.other, '/admin/history')).toContain('two_org_run');
    expect(await page(browsers.org, '/admin/history')).not.toContain('two_org_run');
  });
});

describe('a deleted brand’s id re-created in another organization inherits nothing', () => {
  it('the new org’s administrators see none of the old org’s runs or reports under that id', async () => {
    const now = Date.now();
    await env.DB.batch([
      env.DB.prepare(`INSERT INTO brands (id, org_id, name, dataset, created_at) VALUES ('brand_reused', 'org_other', 'Old', NULL, 0)`),
      env.DB.prepare(
        `INSERT INTO query_log (id, request_id, principal_kind, principal_id, org_id, user_id, brand_id, query_id, period, sql, dry_run,
                                transport, outcome, created_at)
         VALUES ('ql_reused_old', 'req_reused_old', 'key', ?1, 'org_other', NULL, 'brand_reused', NULL, NULL, 'SELECT old_org_secret_sql',
                 0, 'rest', 'OK', ?2)`,
      ).bind(DEMO_KEY_IDS.other, now - 1000),
      env.DB.prepare(
        `INSERT INTO feedback (id, request_id, principal_kind, principal_id, org_id, brand_id, summary, recent_queries, created_at)
         VALUES ('fb_reused_old', 'req_fb_reused', 'key', ?1, 'org_other', 'brand_reused', 'Old org secret report', '[]', ?2)`,
      ).bind(DEMO_KEY_IDS.other, now - 900),
    ]);
    // Visible to the old org while the brand is theirs.
    expect(await page(browsers.other, '/admin/history')).toContain('old_org_secret_sql');
    expect(await page(browsers.other, '/admin/inbox')).toContain('Old org secret report');

    // `brand delete` (its rows stay, as the audit trail) and `brand create` with the same id in org_demo.
    await env.DB.batch([
      env.DB.prepare(`DELETE FROM brands WHERE id = 'brand_reused'`),
      env.DB.prepare(`INSERT INTO brands (id, org_id, name, dataset, created_at) VALUES ('brand_reused', 'org_demo', 'New', NULL, 1)`),
    ]);
    for (const path of ['/admin/history', '/admin/history?brand=brand_reused', '/admin/history.csv?brand=brand_reused']) {
      const res = await browsers.org.get(path);
      expect(res.status).toBe(200);
      expect(await res.text()).not.toContain('old_org_secret_sql');
    }
    expect(await page(browsers.org, '/admin/inbox')).not.toContain('Old org secret report');
    expect((await browsers.org.get('/admin/inbox/fb_reused_old')).status).toBe(404);
    expect((await totalsOf(TEST_ADMINS.org.email)).brands.map((b) => b.id)).not.toContain('brand_reused');
  });
});

describe('a report always has an owner someone can read', () => {
  it('an administrator of brands in two organizations must name the brand; with it the report is that brand’s org’s', async () => {
    const { tokens } = await connectAssistant(TWO_ORG_ADMIN);
    const client = await mcpClient(tokens.access_token);
    const before = await env.DB.prepare('SELECT count(*) AS n FROM feedback').first<number>('n');
    const refused = await client.callTool({ name: 'report_data_issue', arguments: { summary: 'Two-org report without a brand' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('VALIDATION');
    expect(JSON.stringify(refused.content)).toContain('brandId is required');
    expect(await env.DB.prepare('SELECT count(*) AS n FROM feedback').first<number>('n')).toBe(before);

    const filed = await client.callTool({
      name: 'report_data_issue',
      arguments: { summary: 'Two-org report about umbrella', brandId: 'brand_umbrella' },
    });
    await client.close();
    expect(filed.isError ?? false).toBe(false);
    const ref = (filed.structuredContent as { feedbackRef: string }).feedbackRef;
    expect(await env.DB.prepare('SELECT org_id, brand_id FROM feedback WHERE id = ?').bind(ref).first()).toEqual({
      org_id: 'org_other',
      brand_id: 'brand_umbrella',
    });
    expect(await page(browsers.other, '/admin/inbox')).toContain('Two-org report about umbrella');
    expect(await page(browsers.org, '/admin/inbox')).not.toContain('Two-org report about umbrella');
  });

  it('an org key without brandId still files an organization-wide report under its org', async () => {
    const res = await postJson('/v1/data/feedback', 'org', { summary: 'Org-wide report still fine' });
    expect(res.status).toBe(200);
    const ref = (res.body as { feedbackRef: string }).feedbackRef;
    expect(await env.DB.prepare('SELECT org_id, brand_id FROM feedback WHERE id = ?').bind(ref).first()).toEqual({
      org_id: 'org_demo',
      brand_id: null,
    });
    expect(await page(browsers.org, '/admin/inbox')).toContain('Org-wide report still fine');
  });
});

describe('CSV cells are always safe', () => {
  it('a logged `;=` SQL text is exported quoted, with no cell a spreadsheet would run, whatever its list separator', async () => {
    const sql = "SELECT 1 x;=cmd|' /C calc'!A0;";
    // Refused by the guard after the brand check: logged under brand_acme, with its SQL.
    const res = await postJson('/v1/data/query', 'brand', { brandId: 'brand_acme', sql });
    expect(res.status).toBe(400);
    const csv = await (await browsers.org.get('/admin/history.csv?brand=brand_acme&outcome=error')).text();
    const line = csv.split('\r\n').find((l) => l.includes('cmd|'));
    expect(line).toBeDefined();
    expect(line!.endsWith(`,"SELECT 1 x;'=cmd|' /C calc'!A0;"`)).toBe(true);
    // Split at `;` as a European spreadsheet does, or at `,`, `|` or tab: no piece starts a formula.
    for (const sep of [';', ',', '|', '\t']) {
      for (const cell of line!.split(sep)) expect(cell, `split at ${JSON.stringify(sep)}`).not.toMatch(/^"?[=+\-@]/);
    }
  });

  it.each([
    ['=1+1', `"'=1+1"`],
    ['a;=b', `"a;'=b"`],
    ['a,+b|-c\t@d', `"a,'+b|'-c\t'@d"`],
    ['x\n=HYPERLINK("http://evil")', `"x\n'=HYPERLINK(""http://evil"")"`],
    ['a;\t\t=b', `"a;'\t'\t'=b"`],
    ['\r=x', `"'\r'=x"`],
    ['SELECT a - b, c', '"SELECT a - b, c"'],
    ['plain', '"plain"'],
  ])('%j becomes %s', (text, field) => {
    expect(csvField(text)).toBe(field);
  });

  it('numbers and booleans stay bare, null is empty', () => {
    expect([csvField(12), csvField(true), csvField(null), csvField({ digits: '0.000001' })]).toEqual(['12', 'true', '', '0.000001']);
  });
});

describe('the Catalog page shows each administrator only their own organization’s catalog', () => {
  const memory = (id: string, owner: Catalog['memories'][number]['owner']) => ({ id, owner, table: null, title: id, content: id });
  const planOf = (entries: CatalogPlan['entries'], hash: string): CatalogPlan => ({
    entries,
    counts: { add: entries.length, change: 0, remove: 0, skipped: 0 },
    contentHash: hash.repeat(64 / hash.length),
    planHash: 'p'.repeat(64),
    prune: false,
  });
  const stored = {
    orgs: ['org_demo', 'org_other'],
    brands: [
      { id: 'brand_acme', orgId: 'org_demo' },
      { id: 'brand_umbrella', orgId: 'org_other' },
    ],
    catalog: { reports: [], savedQueries: [], memories: [] },
  };

  it('versionOrgs: an item changes its owner’s organization’s catalog, a system item every one’s', () => {
    const folder: Catalog = {
      reports: [],
      savedQueries: [{ id: 'sq_u', brandId: 'brand_umbrella', name: null, description: null, sql: 'SELECT 1', tables: null }],
      memories: [
        memory('mem_a', { scope: 'brand', orgId: null, brandId: 'brand_acme' }),
        memory('mem_s', { scope: 'system', orgId: null, brandId: null }),
      ],
    };
    const plan = planOf(
      [
        { action: 'add', kind: 'memory', id: 'mem_a' },
        { action: 'add', kind: 'savedQuery', id: 'sq_u' },
        { action: 'remove', kind: 'memory', id: 'mem_gone', skipped: true },
      ],
      'a',
    );
    expect(versionOrgs(plan, folder, stored)).toEqual([
      { orgId: 'org_demo', summary: '1 to add, 0 to change, 0 to remove' },
      { orgId: 'org_other', summary: '1 to add, 0 to change, 0 to remove' },
    ]);
    expect(versionOrgs(planOf([{ action: 'add', kind: 'memory', id: 'mem_s' }], 'b'), folder, stored).map((o) => o.orgId)).toEqual([
      'org_demo',
      'org_other',
    ]);
  });

  it('another organization’s administrator sees neither the folder nor the version of org_demo’s apply', async () => {
    const folder: Catalog = {
      reports: [],
      savedQueries: [],
      memories: [memory('mem_acme_private', { scope: 'brand', orgId: null, brandId: 'brand_acme' })],
    };
    const plan = planOf([{ action: 'add', kind: 'memory', id: 'mem_acme_private' }], 'acbd');
    const statements = recordVersionStatements(plan, versionOrgs(plan, folder, stored), {
      appliedBy: 'acme data team',
      now: Date.now(),
      source: 'catalogs/acme-private-folder',
    });
    await env.DB.batch(statements.map((st) => env.DB.prepare(st.sql).bind(...st.params)));

    for (const who of ['org', 'brand'] as const) {
      const html = await page(browsers[who], '/admin/catalog');
      expect(html).toContain('catalogs/acme-private-folder');
      expect(html).toContain(plan.contentHash.slice(0, 12));
    }
    const other = await page(browsers.other, '/admin/catalog');
    expect(other).not.toContain('catalogs/acme-private-folder');
    expect(other).not.toContain('acme data team');
    expect(other).not.toContain(plan.contentHash.slice(0, 12));
    // Their own live version is still the demo catalog's (its system items are every organization's).
    expect(other).toContain('catalog/demo');
  });
});
