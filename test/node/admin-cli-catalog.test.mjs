// `npm run admin -- catalog plan | apply | export` and the brand/key/user deletes, in process on a throwaway local D1
// holding the demo seed (tenants and the catalog/demo/ folder): export -> plan shows nothing -> edit one section ->
// plan shows that one change -> apply -> the database holds it, recorded as a version; invalid folders are refused
// with the file, the item and the line, and nothing is written.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CATALOG_DIR, readCatalogDir } from '../../scripts/lib/catalog-dir.mjs';
import { importWorkerModules } from '../../scripts/lib/import-ts.mjs';
import { adminTestDatabase } from './admin-in-process.mjs';
import { startTestWarehouse } from './warehouse-helpers.mjs';

const t = adminTestDatabase('admin-cli-catalog-');
const { rows } = t;
/** @type {string} */
let work;
/** This file's own local warehouse (every plan and apply dry-runs changed SQL on it), and its env file. */
let warehouse;
/** @type {string} */
let envFile;

/** `catalog plan|apply` check against the warehouse by default: this file's, unless a call names its own or --offline. */
const withWarehouse = (args) =>
  args[0] === 'catalog' && (args[1] === 'plan' || args[1] === 'apply') && !args.includes('--env-file') && !args.includes('--offline')
    ? [...args, '--env-file', envFile]
    : args;
const admin = (...args) => t.admin(...withWarehouse(args));
const adminJson = (...args) => t.adminJson(...withWarehouse(args));

beforeAll(async () => {
  const { buildDemoSeed } = await importWorkerModules({ 'src/seed/demo-tenants.ts': ['buildDemoSeed'] });
  const keys = {
    org: 'wqk_catalogOrg0000000000000000000000000000000',
    brand: 'wqk_catalogBrand00000000000000000000000000000',
    other: 'wqk_catalogOther00000000000000000000000000000',
  };
  const admins = {
    org: { email: 'org@catalog.test', password: 'catalog-pass-1' },
    brand: { email: 'brand@catalog.test', password: 'catalog-pass-2' },
  };
  const seed = await buildDemoSeed({ now: Date.now(), keys, admins, catalog: await readCatalogDir(DEMO_CATALOG_DIR) });
  await rows(seed.join(';\n'));
  work = await mkdtemp(join(tmpdir(), 'catalog-folders-'));
  warehouse = await startTestWarehouse();
  envFile = join(work, 'warehouse.vars');
  // The test warehouse hosts the project under its default name; the env file says so (as .dev.vars may).
  await writeFile(
    envFile,
    `BIGQUERY_API_BASE='${warehouse.wh.url}'\nBIGQUERY_PROJECT='${warehouse.wh.project ?? 'service-v1'}'\nGCP_SERVICE_ACCOUNT_JSON='${warehouse.sa.json}'\n`,
  );
}, 120_000);

afterAll(async () => {
  await warehouse?.wh.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A copy of the demo folder under the work dir, to edit. */
async function demoCopy(name) {
  const dir = join(work, name);
  await cp(DEMO_CATALOG_DIR, dir, { recursive: true });
  return dir;
}

async function editJson(file, edit) {
  const value = JSON.parse(await readFile(file, 'utf8'));
  edit(value);
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
}

describe('catalog export, plan, apply', () => {
  it('the seed recorded the demo catalog as the live version, and the demo folder plans to nothing', async () => {
    const out = await adminJson('catalog', 'plan', DEMO_CATALOG_DIR);
    expect(out.plan.entries).toEqual([]);
    expect(out.live).toMatchObject({ applied_by: 'demo data', source: 'catalog/demo', content_hash: out.plan.contentHash });
    const text = await admin('catalog', 'plan', DEMO_CATALOG_DIR);
    expect(text.stdout).toContain('No changes');
    expect(text.stdout).toContain('applied by demo data');
  });

  it('round-trips: export, plan shows nothing, one edited section is the one change, apply writes it and records who', async () => {
    const dir = join(work, 'exported');
    const exported = await adminJson('catalog', 'export', dir);
    expect(exported).toMatchObject({ reports: 7, savedQueries: 7, memories: 8 });
    // Exported files equal the demo folder's, byte for byte ($schema points at docs/schemas from wherever DIR is).
    const demo = await readCatalogDir(DEMO_CATALOG_DIR);
    const files = await readCatalogDir(dir);
    expect(files.map((f) => f.path).sort()).toEqual(demo.map((f) => f.path).sort());
    const strip = (text) => text.replace(/"\$schema": "[^"]*",\n/, '');
    for (const f of demo) expect(strip(files.find((x) => x.path === f.path)?.text ?? ''), f.path).toBe(strip(f.text));

    expect((await adminJson('catalog', 'plan', dir)).plan.entries).toEqual([]);

    await editJson(join(dir, 'reports/rpt_business_overview.json'), (r) => {
      r.sections[1].name = 'Revenue by sales channel';
      r.sections[1].sql[4] = 'ORDER BY revenue DESC, channel';
    });
    const planned = await adminJson('catalog', 'plan', dir);
    expect(planned.plan.entries).toEqual([
      {
        action: 'change',
        kind: 'section',
        id: 'rq_overview_channels',
        report: 'rpt_business_overview',
        fields: [
          { field: 'name', before: 'Revenue by channel', after: 'Revenue by sales channel' },
          {
            field: 'sql',
            before: expect.stringContaining('ORDER BY revenue DESC'),
            after: expect.stringContaining('ORDER BY revenue DESC, channel'),
          },
        ],
      },
    ]);
    const text = (await admin('catalog', 'plan', dir)).stdout;
    expect(text).toContain('~ section rq_overview_channels (report rpt_business_overview)');
    expect(text).toContain('- ORDER BY revenue DESC');
    expect(text).toContain('+ ORDER BY revenue DESC, channel');
    expect(text).toContain('0 to add, 1 to change, 0 to remove');

    // --expect with another plan's hash is refused; with this one it applies.
    const stale = await admin('catalog', 'apply', dir, '--expect', 'f'.repeat(64));
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('not the one expected');
    const applied = await adminJson('catalog', 'apply', dir, '--expect', planned.plan.planHash, '--author', 'data team');
    expect(applied.applied).toBe(true);
    expect(applied.live).toMatchObject({
      applied_by: 'data team',
      summary: '0 to add, 1 to change, 0 to remove',
      content_hash: planned.plan.contentHash,
    });
    expect(await rows("SELECT name, ordinal, sql_template FROM report_queries WHERE id = 'rq_overview_channels'")).toEqual([
      { name: 'Revenue by sales channel', ordinal: 2, sql_template: expect.stringMatching(/ORDER BY revenue DESC, channel$/) },
    ]);
    expect((await adminJson('catalog', 'plan', dir)).plan.entries).toEqual([]);
  });

  it('reorders, adds and removes sections, and removes items only with --prune', async () => {
    const dir = await demoCopy('reshaped');
    await editJson(join(dir, 'reports/rpt_acme_trading.json'), (r) => {
      r.sections = [
        r.sections[2],
        r.sections[0],
        { id: 'rq_acme_new', name: 'Orders', sql: 'SELECT COUNT(*) AS orders FROM `service-v1.{dataset}.fact__orders`' },
      ];
      r.dashboardConfig = null;
    });
    await rm(join(dir, 'saved-queries/sq_acme_top_customers.json'));
    const kept = await adminJson('catalog', 'plan', dir);
    expect(kept.plan.entries).toContainEqual({ action: 'remove', kind: 'savedQuery', id: 'sq_acme_top_customers', skipped: true });
    expect(kept.plan.entries).toContainEqual({ action: 'remove', kind: 'section', id: 'rq_acme_web_events', report: 'rpt_acme_trading' });
    expect(kept.plan.entries).toContainEqual({
      action: 'add',
      kind: 'section',
      id: 'rq_acme_new',
      report: 'rpt_acme_trading',
      sql: 'SELECT COUNT(*) AS orders FROM `service-v1.{dataset}.fact__orders`',
    });
    // The plan shows an added section's SQL, and dry-runs it (on the one brand the report applies to).
    const keptText = (await admin('catalog', 'plan', dir)).stdout;
    expect(keptText).toContain(
      '+ section rq_acme_new (report rpt_acme_trading)\n      sql:\n        + SELECT COUNT(*) AS orders FROM `service-v1.{dataset}.fact__orders`',
    );
    expect(kept.dryRuns.estimates).toContainEqual({
      item: 'report rpt_acme_trading section rq_acme_new',
      brand: 'brand_acme',
      bytes: expect.any(Number),
    });
    expect(kept.dryRuns.estimates.filter((e) => e.item.startsWith('report rpt_acme_trading'))).toHaveLength(1);
    await adminJson('catalog', 'apply', dir);
    expect(await rows("SELECT id, ordinal FROM report_queries WHERE report_id = 'rpt_acme_trading' ORDER BY ordinal")).toEqual([
      { id: 'rq_acme_range', ordinal: 1 },
      { id: 'rq_acme_countries', ordinal: 2 },
      { id: 'rq_acme_new', ordinal: 3 },
    ]);
    expect(await rows("SELECT count(*) AS n FROM saved_queries WHERE id = 'sq_acme_top_customers'")).toEqual([{ n: 1 }]);
    const pruned = await adminJson('catalog', 'apply', dir, '--prune');
    expect(pruned.plan.entries).toEqual([{ action: 'remove', kind: 'savedQuery', id: 'sq_acme_top_customers' }]);
    expect(await rows("SELECT count(*) AS n FROM saved_queries WHERE id = 'sq_acme_top_customers'")).toEqual([{ n: 0 }]);
    // Back to the demo catalog for the tests below.
    await adminJson('catalog', 'apply', DEMO_CATALOG_DIR);
    expect((await adminJson('catalog', 'plan', DEMO_CATALOG_DIR, '--prune')).plan.entries).toEqual([]);
  });
});

describe('invalid folders are refused before anything is written, naming file, item and line', () => {
  /** @type {(dir: string) => Promise<{ code: number, stdout: string, stderr: string }>} */
  const refusedApply = async (dir) => {
    const before = await rows('SELECT count(*) AS n FROM catalog_versions');
    const r = await admin('catalog', 'apply', dir);
    expect(r.code).toBe(1);
    expect(await rows('SELECT count(*) AS n FROM catalog_versions')).toEqual(before);
    return r;
  };

  it('an unknown slot', async () => {
    const dir = await demoCopy('bad-slot');
    await editJson(join(dir, 'reports/rpt_globex_stores.json'), (r) => {
      r.sections[0].sql[2] = "WHERE channel = '{channel}' AND day BETWEEN DATE '{start_date}' AND DATE '{end_date}'";
    });
    const r = await refusedApply(dir);
    expect(r.stderr).toMatch(
      /reports\/rpt_globex_stores\.json:\d+: report rpt_globex_stores section rq_globex_store_daily: template uses unknown slot\(s\) \{channel\}/,
    );
  });

  it('SQL touching another dataset, on the line of the SQL that does', async () => {
    const dir = await demoCopy('bad-dataset');
    const file = join(dir, 'reports/rpt_demo_channel_mix.json');
    await editJson(file, (r) => {
      r.sections[0].sql[1] = 'FROM `service-v1.umbrella.fact__orders`';
    });
    const r = await refusedApply(dir);
    const line = (await readFile(file, 'utf8')).split('\n').findIndex((l) => l.includes('service-v1.umbrella.fact__orders')) + 1;
    expect(r.stderr).toContain(
      `reports/rpt_demo_channel_mix.json:${line}: report rpt_demo_channel_mix section rq_mix_share: on brand brand_acme (dataset acme): FORBIDDEN_TABLE`,
    );
  });

  it('a malformed chartSpec', async () => {
    const dir = await demoCopy('bad-chart');
    await editJson(join(dir, 'reports/rpt_business_overview.json'), (r) => {
      r.sections[1].chartSpec = { type: 'bar', x: 'channel', yy: 'revenue' };
    });
    const r = await refusedApply(dir);
    expect(r.stderr).toMatch(/reports\/rpt_business_overview\.json:\d+: report rpt_business_overview: sections\.1\.chartSpec/);
  });

  it('a duplicate id, and a dashboard tile naming no section', async () => {
    const dir = await demoCopy('bad-ids');
    await editJson(join(dir, 'saved-queries/sq_globex_monthly_kpis.json'), (q) => {
      q.id = 'sq_acme_monthly_kpis';
    });
    await editJson(join(dir, 'reports/rpt_demo_channel_mix.json'), (r) => {
      r.dashboardConfig.tiles[0].queryId = 'rq_nowhere';
    });
    const r = await refusedApply(dir);
    expect(r.stderr).toMatch(
      /saved-queries\/sq_globex_monthly_kpis\.json:\d+: saved query sq_acme_monthly_kpis: duplicate query id: already used by saved query sq_acme_monthly_kpis \(saved-queries\/sq_acme_monthly_kpis\.json\)/,
    );
    expect(r.stderr).toMatch(/reports\/rpt_demo_channel_mix\.json:\d+: report rpt_demo_channel_mix: dashboard tile names rq_nowhere/);
  });

  it('JSON that does not parse, with its line', async () => {
    const dir = await demoCopy('bad-json');
    await writeFile(join(dir, 'memories/mem_demo_orders_revenue.json'), '{\n  "id": "mem_x",\n  "owner": "system",,\n}\n');
    const r = await refusedApply(dir);
    expect(r.stderr).toMatch(/memories\/mem_demo_orders_revenue\.json:3: not valid JSON/);
  });
});

describe('the warehouse check', () => {
  it('--check-warehouse dry-runs every section for each brand it applies to and every saved query, with bytes', async () => {
    const out = await adminJson('catalog', 'plan', DEMO_CATALOG_DIR, '--check-warehouse');
    // 4 system sections x 3 provisioned brands + 4 org_demo x 2 + 3 acme + 1 globex + 1 org_other + 1 umbrella + 7 saved.
    expect(out.dryRuns.estimates).toHaveLength(12 + 8 + 3 + 1 + 1 + 1 + 7);
    expect(out.dryRuns.estimates).toContainEqual({
      item: 'report rpt_business_overview section rq_overview_kpis',
      brand: 'brand_globex',
      bytes: expect.any(Number),
    });
    expect(out.dryRuns.estimates.every((e) => e.bytes > 0)).toBe(true);
    const text = (await admin('catalog', 'plan', DEMO_CATALOG_DIR, '--check-warehouse')).stdout;
    expect(text).toMatch(/saved query sq_acme_top_customers on brand_acme: [\d,]+ bytes/);
    // By default only changed SQL is dry-run: an unchanged folder needs no warehouse at all.
    const unchanged = await admin('catalog', 'plan', DEMO_CATALOG_DIR, '--env-file', join(work, 'no-such.vars'));
    expect(unchanged.code, unchanged.stderr).toBe(0);
    expect(unchanged.stdout).toContain('no changed SQL to dry-run on the warehouse');
  }, 120_000);

  it('a missing column fails plan and apply by default, at the file, line and column of the catalog file', async () => {
    const dir = await demoCopy('missing-column');
    const file = join(dir, 'reports/rpt_globex_stores.json');
    await editJson(file, (r) => {
      r.sections[0].sql[0] = r.sections[0].sql[0].replace('SELECT ', 'SELECT order_total, ');
    });
    const text = await readFile(file, 'utf8');
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('order_total')) + 1;
    const column = lines[line - 1].indexOf('order_total') + 1;
    for (const verb of ['plan', 'apply']) {
      const before = await rows('SELECT count(*) AS n FROM catalog_versions');
      const r = await admin('catalog', verb, dir);
      expect(r.code, r.stdout).toBe(1);
      expect(r.stderr).toContain(
        `reports/rpt_globex_stores.json:${line}:${column}: report rpt_globex_stores section rq_globex_store_daily: on brand brand_globex (dataset globex): the warehouse refused the dry run: QUERY_FAILED: Unrecognized name: order_total`,
      );
      // BigQuery's position counts in the filled SQL the reader never sees; the file's replaces it.
      expect(r.stderr).not.toMatch(/at \[\d+:\d+\]/);
      expect(await rows('SELECT count(*) AS n FROM catalog_versions')).toEqual(before);
    }
  }, 120_000);

  it('a position after a filled slot maps back through the slot to the template', async () => {
    const dir = await demoCopy('after-slot');
    const file = join(dir, 'saved-queries/sq_acme_top_customers.json');
    await editJson(file, (q) => {
      q.sql = 'SELECT customer_id FROM `service-v1.acme.fact__orders` WHERE no_such_col > 1';
      q.tables = ['service-v1.acme.fact__orders'];
    });
    const text = await readFile(file, 'utf8');
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('no_such_col')) + 1;
    const column = lines[line - 1].indexOf('no_such_col') + 1;
    const r = await admin('catalog', 'plan', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `saved-queries/sq_acme_top_customers.json:${line}:${column}: saved query sq_acme_top_customers: on brand brand_acme`,
    );
  }, 120_000);

  it('--offline skips the check and says which changed SQL was not dry-run; a missing table still fails without it', async () => {
    const dir = await demoCopy('bad-table');
    await editJson(join(dir, 'reports/rpt_globex_stores.json'), (r) => {
      r.sections[0].sql[1] = 'FROM `service-v1.{dataset}.agg__no_such_table`';
    });
    const offline = await admin('catalog', 'plan', dir, '--offline');
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toContain(
      'not checked against the warehouse (--offline): 1 changed SQL not dry-run (section rq_globex_store_daily); a missing table or column shows only when it runs',
    );
    expect((await adminJson('catalog', 'plan', dir, '--offline')).notDryRun).toEqual(['section rq_globex_store_daily']);
    const r = await admin('catalog', 'plan', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /reports\/rpt_globex_stores\.json(:\d+:\d+)?: report rpt_globex_stores section rq_globex_store_daily: on brand brand_globex \(dataset globex\): the warehouse refused the dry run/,
    );
    const noVars = await admin('catalog', 'plan', dir, '--env-file', join(work, 'no-such.vars'));
    expect(noVars.stderr).toContain('give --env-file FILE, or --offline to skip the check');
  }, 120_000);
});

describe('catalog messages', () => {
  it('an unknown field names the known fields, at its own line', async () => {
    const dir = await demoCopy('unknown-field');
    const file = join(dir, 'saved-queries/sq_acme_top_customers.json');
    await editJson(file, (q) => {
      q.title = 'Top customers';
    });
    const line = (await readFile(file, 'utf8')).split('\n').findIndex((l) => l.includes('"title"')) + 1;
    const r = await admin('catalog', 'plan', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `saved-queries/sq_acme_top_customers.json:${line}: saved query sq_acme_top_customers: Unrecognized key: "title"; the known fields are id, brand, name, description, sql, tables`,
    );
  });

  it('a section id that collides with a saved query the folder also defines is one duplicate, not "not defined"', async () => {
    const dir = await demoCopy('collide');
    await editJson(join(dir, 'reports/rpt_acme_trading.json'), (r) => {
      r.sections[0].id = 'sq_acme_top_customers';
      r.dashboardConfig = null;
    });
    const r = await admin('catalog', 'plan', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'saved query sq_acme_top_customers: duplicate query id: already used by report rpt_acme_trading section sq_acme_top_customers',
    );
    expect(r.stderr).not.toContain('which the folder does not define');
  });

  it("export --org writes one organization: its own and its brands' items, no system or other organization's", async () => {
    const dir = join(work, 'org-export');
    const out = await adminJson('catalog', 'export', dir, '--org', 'org_other');
    expect(out).toMatchObject({ org: 'org_other', reports: 2 });
    const files = (await readCatalogDir(dir)).map((f) => f.path).sort();
    expect(files).toContain('reports/rpt_other_portfolio.json');
    expect(files).toContain('reports/rpt_umbrella_clinics.json');
    expect(files.filter((f) => f.startsWith('reports/'))).toEqual([
      'reports/rpt_other_portfolio.json',
      'reports/rpt_umbrella_clinics.json',
    ]);
    // Umbrella is org_other's one brand: every saved query and memory exported is about it.
    expect(files.filter((f) => !f.startsWith('reports/')).every((f) => f.includes('umbrella'))).toBe(true);
    expect(files.filter((f) => !f.startsWith('reports/')).length).toBeGreaterThan(0);
    // Planned without --prune, the folder changes nothing: what it leaves out is kept.
    const planned = await adminJson('catalog', 'plan', dir);
    expect(planned.plan.counts).toMatchObject({ add: 0, change: 0, remove: 0 });
    expect((await admin('catalog', 'export', dir, '--org', 'org_nowhere')).stderr).toContain('no organization org_nowhere');
  });
});

describe('brands, keys and users', () => {
  it('brand update sets and clears the dataset, time zone and currency; a taken dataset is refused', async () => {
    expect(
      await adminJson(
        'brand',
        'update',
        'brand_initech',
        '--dataset',
        'initech',
        '--timezone',
        'Europe/Paris',
        '--name',
        'Initech',
        '--currency',
        'chf',
      ),
    ).toEqual({
      id: 'brand_initech',
      orgId: 'org_demo',
      name: 'Initech',
      dataset: 'initech',
      timezone: 'Europe/Paris',
      currency: 'CHF',
    });
    expect((await admin('brand', 'update', 'brand_initech', '--currency', 'Swiss francs')).stderr).toContain(
      '--currency Swiss francs is not an ISO 4217 currency code',
    );
    expect((await admin('brand', 'update', 'brand_initech', '--currency', 'CHF', '--no-currency')).stderr).toContain(
      'give --currency or --no-currency, not both',
    );
    const taken = await admin('brand', 'update', 'brand_initech', '--dataset', 'acme');
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('dataset acme already belongs to another brand');
    expect(await adminJson('brand', 'update', 'brand_initech', '--no-dataset', '--no-timezone', '--no-currency')).toMatchObject({
      dataset: null,
      timezone: null,
      currency: null,
    });
    expect((await admin('brand', 'update', 'brand_nope', '--name', 'x')).stderr).toContain('no brand brand_nope');
  });

  it('brand delete refuses while things belong to it and says what; --cascade deletes them and says how many', async () => {
    const refused = await admin('brand', 'delete', 'brand_umbrella');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('brand brand_umbrella still has 1 report(s), 2 saved query(ies), 2 memory(ies)');
    expect(await rows("SELECT count(*) AS n FROM brands WHERE id = 'brand_umbrella'")).toEqual([{ n: 1 }]);
    const done = await adminJson('brand', 'delete', 'brand_umbrella', '--cascade');
    expect(done).toEqual({ id: 'brand_umbrella', deleted: true, cascaded: { 'report(s)': 1, 'saved query(ies)': 2, 'memory(ies)': 2 } });
    expect(
      await rows(
        "SELECT (SELECT count(*) FROM brands WHERE id = 'brand_umbrella') + (SELECT count(*) FROM saved_queries WHERE brand_id = 'brand_umbrella') + (SELECT count(*) FROM memories WHERE brand_id = 'brand_umbrella') AS n",
      ),
    ).toEqual([{ n: 0 }]);
    expect(await adminJson('brand', 'delete', 'brand_initech')).toEqual({ id: 'brand_initech', deleted: true, cascaded: {} });
  });

  it('key delete only after revoke; user delete refuses while it administers, --cascade removes the memberships', async () => {
    const live = await admin('key', 'delete', 'key_demo_brand');
    expect(live.code).toBe(1);
    expect(live.stderr).toContain('revoke it first');
    await adminJson('key', 'revoke', 'key_demo_brand');
    expect(await adminJson('key', 'delete', 'key_demo_brand')).toEqual({ id: 'key_demo_brand', deleted: true });
    expect(await rows("SELECT count(*) AS n FROM api_keys WHERE id = 'key_demo_brand'")).toEqual([{ n: 0 }]);

    const user = await admin('user', 'delete', 'brand@catalog.test');
    expect(user.code).toBe(1);
    expect(user.stderr).toContain('still administers 1');
    expect(await adminJson('user', 'delete', 'brand@catalog.test', '--cascade')).toMatchObject({
      email: 'brand@catalog.test',
      deleted: true,
      memberships: 1,
    });
    expect(await rows("SELECT count(*) AS n FROM memberships WHERE user_id = 'user_demo_brand_admin'")).toEqual([{ n: 0 }]);
  });
});
