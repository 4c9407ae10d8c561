import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkCatalog } from '../src/features/catalog-files/check';
import { catalogFiles } from '../src/features/catalog-files/format';
import { type CatalogFile, loadCatalog } from '../src/features/catalog-files/load';
import { applyStatements, planCatalog, READ_CATALOG_SQL, storedCatalog } from '../src/features/catalog-files/plan';
import { recordVersionStatements, versionOrgs } from '../src/features/catalog-files/versions';
import { QueryListSchema } from '../src/schemas/catalog';
import { page, signedIn } from './admin-client';
import { errorOf, mcpClientsPerKey, okData } from './mcp-client';
import { api, expectError, postJson, seedDemo, TEST_ADMINS, TEST_KEYS } from './seed';

/**
 * The catalog files end to end inside the Worker's runtime: the demo catalog exported from D1 plans to nothing; one
 * edited section is the plan's one change; applied (one batch, recorded as a version), the REST and MCP listings
 * show it and the admin Catalog page names the live version. A stored template that cannot fill is a coded 400
 * naming the report and section, never a 500.
 */

const clients = mcpClientsPerKey(TEST_KEYS);

async function readStored() {
  const results = await env.DB.batch(READ_CATALOG_SQL.map((s) => env.DB.prepare(s)));
  return storedCatalog(results.map((r) => r.results as Record<string, unknown>[]));
}

/** The database's catalog as files (what `catalog export` writes), without `$schema`. */
async function exported(): Promise<CatalogFile[]> {
  const stored = await readStored();
  return [...catalogFiles(stored.catalog, null)].map(([path, text]) => ({ path, text }));
}

async function plan(files: CatalogFile[]) {
  const loaded = loadCatalog(files);
  const stored = await readStored();
  const checked = await checkCatalog(loaded, {
    project: 'service-v1',
    orgs: stored.orgs,
    brands: stored.brands,
    current: stored.catalog,
    prune: false,
  });
  expect([...loaded.problems, ...checked.problems]).toEqual([]);
  return { loaded, plan: await planCatalog(loaded.catalog, stored, { prune: false }) };
}

beforeAll(async () => {
  await seedDemo();
});

describe('catalog round trip', () => {
  it('export -> plan shows nothing -> edit one section -> plan shows that change -> apply -> REST, MCP and the admin page show it', async () => {
    const files = await exported();
    expect((await plan(files)).plan.entries).toEqual([]);

    const path = 'reports/rpt_business_overview.json';
    const edited = files.map((f) => {
      if (f.path !== path) return f;
      const report = JSON.parse(f.text);
      report.sections[0].name = 'Headline numbers';
      report.sections[0].narrativeHints = 'Lead with revenue.';
      return { path, text: JSON.stringify(report, null, 2) };
    });
    const { loaded, plan: p } = await plan(edited);
    expect(p.entries).toEqual([
      {
        action: 'change',
        kind: 'section',
        id: 'rq_overview_kpis',
        report: 'rpt_business_overview',
        fields: [
          { field: 'name', before: 'Headline KPIs', after: 'Headline numbers' },
          { field: 'narrativeHints', before: expect.stringContaining('State revenue'), after: 'Lead with revenue.' },
        ],
      },
    ]);
    const now = Date.now();
    const statements = [
      ...applyStatements(loaded.catalog, p, { actor: { kind: 'cli', name: 'catalog test' }, now }),
      ...recordVersionStatements(p, versionOrgs(p, loaded.catalog, await readStored()), {
        appliedBy: 'catalog test',
        now,
        source: 'test/catalog-files',
      }),
    ];
    await env.DB.batch(statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)));
    expect((await plan(edited)).plan.entries).toEqual([]);

    const rest = QueryListSchema.parse((await api('/v1/data/reports/rpt_business_overview/queries', 'brand')).body);
    expect(rest.queries[0]).toMatchObject({
      id: 'rq_overview_kpis',
      name: 'Headline numbers',
      narrativeHints: 'Lead with revenue.',
      ordinal: 1,
    });
    const mcp = okData(
      await clients.brand.callTool({ name: 'list_report_queries', arguments: { reportId: 'rpt_business_overview' } }),
      QueryListSchema,
    );
    expect(mcp).toEqual(rest);

    const html = await page(await signedIn(TEST_ADMINS.org), '/admin/catalog');
    expect(html).toContain('Live catalog version');
    expect(html).toContain(p.contentHash.slice(0, 12));
    expect(html).toContain('applied by catalog test');
    expect(html).toContain('0 to add, 1 to change, 0 to remove');
  });
});

describe('a stored template that cannot fill', () => {
  it('is a coded 400 naming the report and section (REST and MCP), not a 500', async () => {
    await env.DB.prepare(
      "UPDATE report_queries SET sql_template = sql_template || ' AND region = {region}' WHERE id = 'rq_acme_countries'",
    ).run();
    try {
      const res = await postJson('/v1/data/query', 'brand', { queryId: 'rq_acme_countries' });
      const error = expectError(res, 400, 'QUERY_FAILED');
      expect(error.message).toContain('report rpt_acme_trading section rq_acme_countries cannot run');
      expect(error.details).toEqual({ stage: 'template', queryId: 'rq_acme_countries', reportId: 'rpt_acme_trading' });
      const tool = errorOf(await clients.brand.callTool({ name: 'run_query', arguments: { queryId: 'rq_acme_countries' } }));
      expect(tool).toMatchObject({ code: 'QUERY_FAILED', message: expect.stringContaining('rpt_acme_trading section rq_acme_countries') });
    } finally {
      await env.DB.prepare(
        "UPDATE report_queries SET sql_template = replace(sql_template, ' AND region = {region}', '') WHERE id = 'rq_acme_countries'",
      ).run();
    }
  });
});
