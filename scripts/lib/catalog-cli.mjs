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
    'src/features/catalog-files/sql-position.ts': ['slotEdits', 'projectEdits', 'originalOffset', 'offsetOf', 'fileSqlPosition'],
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
  const texts = new Map(files.map((f) => [f.path, f.text]));
  return { files: files.length, texts, loaded, stored, live, checked, problems, warnings, plan };
}

/**
 * The items whose SQL a plan writes or moves: added sections and saved queries, those whose `sql` changed, sections
 * moved to another report and saved queries moved to another brand, and every section of a report whose owner
 * changed (it now runs on other brands). Keys as in `loaded.sources` (`section:<id>`, `saved:<id>`).
 * @param {{ entries: { action: string, kind: string, id: string, report?: string, fields?: { field: string }[], skipped?: boolean }[] }} plan
 * @param {{ reports: { id: string, sections: { id: string }[] }[] }} folder
 */
export function changedSqlKeys(plan, folder) {
  const keys = new Set();
  const has = (e, ...names) => (e.fields ?? []).some((f) => names.includes(f.field));
  for (const e of plan.entries) {
    if (e.skipped || e.action === 'remove') continue;
    if (e.kind === 'section' && (e.action === 'add' || has(e, 'sql', 'report'))) keys.add(`section:${e.id}`);
    if (e.kind === 'savedQuery' && (e.action === 'add' || has(e, 'sql', 'brand'))) keys.add(`saved:${e.id}`);
    if (e.kind === 'report' && (e.action === 'add' || has(e, 'owner')))
      for (const s of folder.reports.find((r) => r.id === e.id)?.sections ?? []) keys.add(`section:${s.id}`);
  }
  return keys;
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
 * One organization's part of a catalog: its org reports and memories, and the brand reports, saved queries and
 * memories of its brands. System items belong to no organization and are left out.
 * @param {{ reports: any[], savedQueries: any[], memories: any[] }} catalog
 * @param {string} orgId
 * @param {{ id: string, orgId: string }[]} brands
 */
export function catalogOfOrg(catalog, orgId, brands) {
  const own = new Set(brands.filter((b) => b.orgId === orgId).map((b) => b.id));
  const mine = (/** @type {{ scope: string, orgId: string | null, brandId: string | null }} */ o) =>
    (o.scope === 'org' && o.orgId === orgId) || (o.scope === 'brand' && own.has(o.brandId ?? ''));
  return {
    reports: catalog.reports.filter((r) => mine(r.owner)),
    savedQueries: catalog.savedQueries.filter((q) => own.has(q.brandId)),
    memories: catalog.memories.filter((x) => mine(x.owner)),
  };
}

/**
 * Writes the database's catalog under `dir`; with `org`, only that organization's part (`catalogOfOrg`).
 * @param {{ dir: string, org?: string, readAll: (sql: string) => Promise<Record<string, unknown>[][]> }} o
 */
export async function exportDir(o) {
  const m = await catalogModules();
  const { stored } = await readStored(o.readAll);
  if (o.org !== undefined && !stored.orgs.includes(o.org)) throw new Error(`no organization ${o.org}`);
  const catalog = o.org === undefined ? stored.catalog : catalogOfOrg(stored.catalog, o.org, stored.brands);
  const files = m.catalogFiles(catalog, schemaDirFrom(o.dir));
  await writeCatalogDir(o.dir, files, Object.values(m.CATALOG_FOLDERS));
  return { files: files.size, catalog };
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
 * The warehouse check (by default on every changed SQL, `changedSqlKeys`; with --check-warehouse on all): each report
 * section dry-run on the warehouse for each brand it applies to (filled for the last full UTC month), each saved
 * query on its brand, through the Worker's own BigQuery client. Returns the bytes estimate of each, and a problem
 * for each the warehouse refuses: the file, line and column of the catalog file BigQuery's `at [line:column]` points
 * at (through the slots and the project name), the item, the brand and BigQuery's message.
 * @param {Awaited<ReturnType<typeof planDir>>} planned
 * @param {Record<string, unknown>} env
 * @param {(sql: string) => Promise<Record<string, unknown>[][]>} readAll runs statements on the target database
 * @param {Set<string> | null} [only] the item keys to dry-run (null: every one)
 */
export async function dryRunCatalog(planned, env, readAll, only = null) {
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
  /** @type {{ key: string, item: string, brand: string, dataset: string, template: string, slots: Record<string, string>, sql: string }[]} */
  const runs = [];
  for (const r of planned.loaded.catalog.reports) {
    for (const b of m.reportDatasets(r, planned.stored.brands)) {
      for (const s of r.sections) {
        if (only && !only.has(`section:${s.id}`)) continue;
        const slots = { dataset: b.dataset, ...window };
        runs.push({
          key: `section:${s.id}`,
          item: `report ${r.id} section ${s.id}`,
          brand: b.id,
          dataset: b.dataset,
          template: s.sql,
          slots,
          sql: m.fillTemplate(s.sql, slots),
        });
      }
    }
  }
  for (const q of planned.loaded.catalog.savedQueries) {
    if (only && !only.has(`saved:${q.id}`)) continue;
    const b = planned.stored.brands.find((x) => x.id === q.brandId);
    if (b?.dataset)
      runs.push({
        key: `saved:${q.id}`,
        item: `saved query ${q.id}`,
        brand: b.id,
        dataset: b.dataset,
        template: q.sql,
        slots: {},
        sql: q.sql,
      });
  }
  const guard = await importWorkerModules({ 'src/sql/guard.ts': ['checkSql', 'withProject', 'CONTRACT_PROJECT'] });
  for (const run of runs) {
    /** @type {{ at: number, from: number, to: number }[]} */
    let sentEdits = [];
    let sentSql = run.sql;
    try {
      // The SQL names the contract's project; the warehouse gets the deployment's, at the references the guard found.
      const verdict = await guard.checkSql(run.sql, { project: guard.CONTRACT_PROJECT, dataset: run.dataset });
      const project = String(env.BIGQUERY_PROJECT ?? guard.CONTRACT_PROJECT);
      const sql = verdict.ok ? guard.withProject(run.sql, verdict.projectAt, guard.CONTRACT_PROJECT, project) : run.sql;
      if (verdict.ok) sentEdits = m.projectEdits(verdict.projectAt, guard.CONTRACT_PROJECT, project);
      sentSql = sql;
      const dry = await client.dryRun(sql, {
        brandId: run.brand,
        dataset: run.dataset,
        requestId: `catalog_check_${Date.now()}`,
        labels: { source: 'catalog-check' },
      });
      estimates.push({ item: run.item, brand: run.brand, bytes: dry.totalBytesProcessed });
    } catch (e) {
      const src = planned.loaded.sources.get(run.key);
      const file = src?.file ?? '(catalog)';
      let where = file;
      let message = e && typeof e === 'object' && 'code' in e ? `${e.code}: ${e instanceof Error ? e.message : String(e)}` : String(e);
      const details = e && typeof e === 'object' && 'details' in e ? /** @type {any} */ (e).details : undefined;
      if (src && typeof details?.line === 'number' && typeof details?.column === 'number') {
        // BigQuery's position is in the SQL it was sent: back through the project name and the slots to the template.
        const filled = m.originalOffset(sentEdits, m.offsetOf(sentSql, details.line, details.column));
        const inTemplate = m.originalOffset(m.slotEdits(run.template, run.slots), filled);
        const text = planned.texts.get(file);
        const pos = text === undefined ? null : m.fileSqlPosition(text, src.lines, [...src.at, 'sql'], run.template, inTemplate);
        if (pos) {
          where = `${file}:${pos.line}:${pos.column}`;
          // Its `at [l:c]` counts in the filled SQL, which the reader never sees; the file position replaces it.
          message = message.replace(/ at \[\d+:\d+\]/, '');
        }
      }
      problems.push(`${where}: ${run.item}: on brand ${run.brand} (dataset ${run.dataset}): the warehouse refused the dry run: ${message}`);
    }
  }
  return { estimates, problems, window };
}
