// The admin CLI's `catalog plan | apply | export`: read a catalog folder, check it against the target database and
// the SQL guard, plan it against what the database holds, apply that plan in one batch, or export the database's
// catalog as a folder. The format, checks, plan and statements are the Worker's TypeScript
// (src/features/catalog-files/), bundled once per process; this file only does the files and the database.
import { importWorkerModules } from './import-ts.mjs';
import { readCatalogDir, schemaDirFrom, writeCatalogDir } from './catalog-dir.mjs';
import { sqlLiteral } from './d1.mjs';

/** @type {Record<string, any> | undefined} */
let modules;

/** The catalog modules, bundled once per process. */
export async function catalogModules() {
  modules ??= await importWorkerModules({
    'src/features/catalog-files/load.ts': ['loadCatalog', 'formatProblem'],
    'src/features/catalog-files/check.ts': ['checkCatalog', 'reportDatasets'],
    'src/features/catalog-files/plan.ts': [
      'READ_CATALOG_SQL',
      'storedCatalog',
      'planCatalog',
      'renderPlan',
      'planSummary',
      'planIsEmpty',
      'applyStatements',
    ],
    'src/features/catalog-files/versions.ts': ['LIVE_VERSION_SQL', 'recordVersionStatements', 'versionOrgs'],
    'src/features/catalog-files/format.ts': ['catalogFiles', 'CATALOG_FOLDERS'],
    'src/catalog/template.ts': ['fillTemplate'],
    'src/features/memories/store.ts': ['inlineStatement'],
  });
  return modules;
}

/** A refusal of the folder: every problem, one per line, each naming file, item and line. */
export class CatalogRefused extends Error {
  /** @param {string[]} problems */
  constructor(problems) {
    super(`the catalog was not applied; fix these first:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/**
 * Reads the database's catalog and tenants (one batch) and its live version.
 * @param {(sql: string) => Promise<Record<string, unknown>[][]>} readAll runs statements, returns every result
 */
export async function readStored(readAll) {
  const m = await catalogModules();
  const results = await readAll([...m.READ_CATALOG_SQL, m.LIVE_VERSION_SQL].join(';\n'));
  const stored = m.storedCatalog(results.slice(0, m.READ_CATALOG_SQL.length));
  const [version] = results[m.READ_CATALOG_SQL.length] ?? [];
  return { stored, live: version ?? null };
}

/**
 * Loads `dir`, checks it against the database and plans it.
 * @param {{ dir: string, prune: boolean, project: string, readAll: (sql: string) => Promise<Record<string, unknown>[][]> }} o
 */
export async function planDir(o) {
  const m = await catalogModules();
  const files = await readCatalogDir(o.dir);
  const loaded = m.loadCatalog(files);
  const { stored, live } = await readStored(o.readAll);
  const checked = await m.checkCatalog(loaded, {
    project: o.project,
    orgs: stored.orgs,
    brands: stored.brands,
    current: stored.catalog,
    prune: o.prune,
  });
  const problems = [...loaded.problems, ...checked.problems].map(m.formatProblem);
  const warnings = checked.warnings.map(m.formatProblem);
  const plan = problems.length === 0 ? await m.planCatalog(loaded.catalog, stored, { prune: o.prune }) : null;
  return { files: files.length, loaded, stored, live, checked, problems, warnings, plan };
}

/**
 * The statements of an apply, inlined for `wrangler d1 execute` or a local batch, ending with the version record.
 * @param {Awaited<ReturnType<typeof planDir>>} p
 * @param {{ author: string, now: number, source: string }} meta
 */
export async function applySql(p, meta) {
  const m = await catalogModules();
  const statements = m.applyStatements(p.loaded.catalog, p.plan, { actor: { kind: 'cli', name: meta.author }, now: meta.now });
  const orgs = m.versionOrgs(p.plan, p.loaded.catalog, p.stored);
  statements.push(...m.recordVersionStatements(p.plan, orgs, { appliedBy: meta.author, now: meta.now, source: meta.source }));
  return statements.map((/** @type {any} */ s) => m.inlineStatement(s, sqlLiteral)).join(';\n');
}

/**
 * Writes the database's catalog under `dir`.
 * @param {{ dir: string, readAll: (sql: string) => Promise<Record<string, unknown>[][]> }} o
 */
export async function exportDir(o) {
  const m = await catalogModules();
  const { stored } = await readStored(o.readAll);
  const files = m.catalogFiles(stored.catalog, schemaDirFrom(o.dir));
  await writeCatalogDir(o.dir, files, Object.values(m.CATALOG_FOLDERS));
  return { files: files.size, catalog: stored.catalog };
}

/**
 * The Worker's variables for a warehouse client run from here: wrangler.toml's [vars], then the env file (dotenv,
 * as wrangler dev reads .dev.vars: BIGQUERY_API_BASE, GCP_SERVICE_ACCOUNT_JSON, ...).
 * @param {string} envFile
 */
export async function warehouseEnv(envFile) {
  const [{ unstable_readConfig }, { readFile }, { parseEnv }, { join }, { ROOT }] = await Promise.all([
    import('wrangler'),
    import('node:fs/promises'),
    import('node:util'),
    import('node:path'),
    import('./import-ts.mjs'),
  ]);
  const vars = unstable_readConfig({ config: join(ROOT, 'wrangler.toml') }, {}).vars;
  const text = await readFile(envFile, 'utf8');
  return { ...vars, ...parseEnv(text) };
}

/**
 * `--check-warehouse`: each report section dry-run on the warehouse for each brand it applies to (filled for the
 * last full UTC month), each saved query on its brand, through the Worker's own BigQuery client. Returns the bytes
 * estimate of each, and a problem (file, item, BigQuery's message) for each the warehouse refuses.
 * @param {Awaited<ReturnType<typeof planDir>>} planned
 * @param {Record<string, unknown>} env
 * @param {(sql: string) => Promise<Record<string, unknown>[][]>} readAll runs statements on the target database
 */
export async function dryRunCatalog(planned, env, readAll) {
  const m = await catalogModules();
  const { createWarehouseClient } = await importWorkerModules({ 'src/warehouse/bigquery-client.ts': ['createWarehouseClient'] });
  // The client reads a brand's own credentials from D1 (brand_credentials): the same database, through the CLI's
  // connection, with `?` values inlined as literals.
  const DB = {
    prepare: (/** @type {string} */ text) => ({
      bind: (/** @type {(string | number | null)[]} */ ...values) => ({
        async first() {
          let i = 0;
          const [rows = []] = await readAll(text.replace(/\?/g, () => sqlLiteral(values[i++] ?? null)));
          return rows[0] ?? null;
        },
      }),
    }),
  };
  const client = createWarehouseClient({ ...env, DB });
  const d = new Date();
  const iso = (/** @type {number} */ ms) => new Date(ms).toISOString().slice(0, 10);
  const window = {
    start_date: iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)),
    end_date: iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 0)),
  };
  /** @type {{ item: string, brand: string, bytes: number }[]} */
  const estimates = [];
  /** @type {string[]} */
  const problems = [];
  /** @type {{ key: string, item: string, brand: string, dataset: string, sql: string }[]} */
  const runs = [];
  for (const r of planned.loaded.catalog.reports) {
    for (const b of m.reportDatasets(r, planned.stored.brands)) {
      for (const s of r.sections)
        runs.push({
          key: `section:${s.id}`,
          item: `report ${r.id} section ${s.id}`,
          brand: b.id,
          dataset: b.dataset,
          sql: m.fillTemplate(s.sql, { dataset: b.dataset, ...window }),
        });
    }
  }
  for (const q of planned.loaded.catalog.savedQueries) {
    const b = planned.stored.brands.find((x) => x.id === q.brandId);
    if (b?.dataset) runs.push({ key: `saved:${q.id}`, item: `saved query ${q.id}`, brand: b.id, dataset: b.dataset, sql: q.sql });
  }
  const guard = await importWorkerModules({ 'src/sql/guard.ts': ['checkSql', 'withProject', 'CONTRACT_PROJECT'] });
  for (const run of runs) {
    try {
      // The SQL names the contract's project; the warehouse gets the deployment's, at the references the guard found.
      const verdict = await guard.checkSql(run.sql, { project: guard.CONTRACT_PROJECT, dataset: run.dataset });
      const sql = verdict.ok ? guard.withProject(run.sql, verdict.projectAt, guard.CONTRACT_PROJECT, env.BIGQUERY_PROJECT) : run.sql;
      const dry = await client.dryRun(sql, {
        brandId: run.brand,
        dataset: run.dataset,
        requestId: `catalog_check_${Date.now()}`,
        labels: { source: 'catalog-check' },
      });
      estimates.push({ item: run.item, brand: run.brand, bytes: dry.totalBytesProcessed });
    } catch (e) {
      const file = planned.loaded.sources.get(run.key)?.file ?? '(catalog)';
      const message = e && typeof e === 'object' && 'code' in e ? `${e.code}: ${e instanceof Error ? e.message : String(e)}` : String(e);
      problems.push(`${file}: ${run.item}: on brand ${run.brand} (dataset ${run.dataset}): the warehouse refused the dry run: ${message}`);
    }
  }
  return { estimates, problems, window };
}
