#!/usr/bin/env node
// `npm run test:bigquery`: a short contract suite of the Worker's own BigQuery client (and the SQL guard's dry-run
// gate) against a REAL BigQuery project, for what the local warehouse can only imitate: dry runs of
// INFORMATION_SCHEMA.COLUMNS, of a wildcard and of a view over another dataset, cache hits, cancel billing, int64
// timestamps, the fast path and every value type. The client is bundled from src/ with esbuild, unchanged.
// Skipped with one line (exit 0) unless the BIGQUERY_CONTRACT_* variables below are set. docs/warehouse-client.md,
// "Contract suite against real BigQuery", says what each check proves. test/node/bigquery-contract.test.mjs runs
// the same suite against the local warehouse.
import { readFileSync } from 'node:fs';
import { importWorkerModules } from './lib/import-ts.mjs';
import { workerVars } from './lib/wrangler-toml.mjs';

/**
 * @typedef {{ name: string, status: 'pass' | 'fail' | 'skip', detail: string }} CheckResult
 * @typedef {{
 *   apiBase: string, project: string, dataset: string, location: string, serviceAccountJson: string,
 *   wildcardPrefix?: string, otherDatasetView?: string, cacheTable?: string, local?: boolean, log?: (line: string) => void,
 *   run?: string, breakClient?: (client: any) => any,
 * }} ContractOptions
 * `run` is the label value (`run`) and SQL marker of this run's jobs (random unless given, for tests that match
 * faults to them); `breakClient` wraps the client, for tests that show a check fails on a wrong implementation.
 */

const VARS = {
  credentials: 'BIGQUERY_CONTRACT_CREDENTIALS',
  project: 'BIGQUERY_CONTRACT_PROJECT',
  dataset: 'BIGQUERY_CONTRACT_DATASET',
  location: 'BIGQUERY_CONTRACT_LOCATION',
  apiBase: 'BIGQUERY_CONTRACT_API_BASE',
  wildcard: 'BIGQUERY_CONTRACT_WILDCARD_PREFIX',
  view: 'BIGQUERY_CONTRACT_OTHER_DATASET_VIEW',
  table: 'BIGQUERY_CONTRACT_TABLE',
};

const silent = { info() {}, warn() {}, error() {} };
const TIMEOUT_MS = 30_000;

/**
 * Runs every check; never throws for a failed check (it is reported), only for a broken setup.
 * @param {ContractOptions} o
 * @returns {Promise<CheckResult[]>}
 */

export async function runContract(o) {
  const log = o.log ?? (() => {});
  const { createWarehouseClient, checkSql, checkDryRun, MAX_REFERENCED_TABLES, CONTRACT_PROJECT, withProject, contractReferences } =
    await importWorkerModules({
      'src/warehouse/bigquery-client.ts': ['createWarehouseClient'],
      'src/sql/guard.ts': ['checkSql', 'checkDryRun', 'MAX_REFERENCED_TABLES', 'CONTRACT_PROJECT', 'withProject'],
      'src/features/query/contract-project.ts': ['contractReferences'],
    });
  const env = {
    // The Worker's defaults for everything else its parsed Config reads (caps, TTLs), as wrangler.toml sets them.
    ...(await workerVars()),
    BIGQUERY_API_BASE: o.apiBase,
    BIGQUERY_PROJECT: o.project,
    BIGQUERY_LOCATION: o.location,
    QUERY_TIMEOUT_MS: String(TIMEOUT_MS),
    GCP_SERVICE_ACCOUNT_JSON: o.serviceAccountJson,
  };
  /** @type {Promise<unknown>[]} */
  const background = [];
  const real = createWarehouseClient(env, { logger: () => silent, waitUntil: (p) => void background.push(p) });
  const client = o.breakClient ? o.breakClient(real) : real;
  const run = o.run ?? `c${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const base = { brandId: 'contract', dataset: o.dataset, requestId: `req_contract_${run}`, labels: { suite: 'contract', run } };
  const queryOpts = { ...base, maxBytesBilled: 1024 ** 3, rowCap: 1000, timeoutMs: TIMEOUT_MS };
  // Callers name the contract's project (`service-v1`); the gate checks against it, as the Worker's does.
  const scope = { project: CONTRACT_PROJECT, dataset: o.dataset };
  /** A table as the SQL sent straight to the client names it (the real project). */
  const T = (name) => `\`${o.project}.${o.dataset}.${name}\``;
  /** A table as a caller names it, for the gate (the contract's project). */
  const C = (name) => `\`${CONTRACT_PROJECT}.${o.dataset}.${name}\``;

  /**
   * The Worker's two gates on `sql`, as src/features/query/run-query.ts runs them: the parser's (2b) against the
   * contract's project, `withProject` at the references it resolved, the dry run of that SQL (`sent`) and the
   * dry-run gate (2c) on its references mapped back (`contractReferences`; `raw` is what BigQuery listed).
   */
  async function gate(sql) {
    const parsed = await checkSql(sql, scope);
    if (!parsed.ok) return { ok: false, why: `guard: ${parsed.message}` };
    const sent = withProject(sql, parsed.projectAt, CONTRACT_PROJECT, o.project);
    const raw = await client.dryRun(sent, { ...base, timeoutMs: TIMEOUT_MS });
    const dry = contractReferences(raw, o.project);
    const verdict = checkDryRun(dry, scope, parsed.tables);
    return verdict.ok ? { ok: true, dry, raw, sent } : { ok: false, why: `dry-run gate: ${verdict.message}`, dry, raw, sent };
  }

  /** @type {[string, () => Promise<[CheckResult['status'], string]>][]} */
  const checks = [
    [
      "dry run of INFORMATION_SCHEMA.COLUMNS, written with service-v1, passes the gate; a table's dry run lists it under the real project, mapped back",
      async () => {
        const g = await gate(`SELECT table_name, column_name, data_type FROM ${C('INFORMATION_SCHEMA.COLUMNS')}`);
        if (!g.ok) return ['fail', g.why ?? ''];
        if (!g.sent.includes(`\`${o.project}.${o.dataset}.INFORMATION_SCHEMA.COLUMNS\``))
          return ['fail', `the SQL sent does not name the real project: ${g.sent}`];
        const info = `referencedTables: ${JSON.stringify(g.raw.referencedTables)}`;
        // Google does not document what INFORMATION_SCHEMA's dry run lists (it may list nothing), so the way back is
        // proven on a table's dry run: listed under the real project, mapped back to the contract's. A client that
        // never reads `referencedTables` fails here (review 2, section 3).
        if (!o.cacheTable) return ['pass', `${info}; the mapping back is unchecked: no ${VARS.table} given`];
        const t = await gate(`SELECT * FROM ${C(o.cacheTable)} LIMIT 1`);
        if (!t.ok) return ['fail', `a dry run of ${o.cacheTable}: ${t.why}`];
        const is = (r, project) => r.projectId === project && r.datasetId === o.dataset && r.tableId === o.cacheTable;
        if (!t.raw.referencedTables.some((r) => is(r, o.project)))
          return ['fail', `the dry run of ${o.cacheTable} does not list it under ${o.project}: ${JSON.stringify(t.raw.referencedTables)}`];
        if (!t.dry.referencedTables.some((r) => is(r, CONTRACT_PROJECT)))
          return ['fail', `${o.cacheTable} is not mapped back to ${CONTRACT_PROJECT}: ${JSON.stringify(t.dry.referencedTables)}`];
        return ['pass', `${info}; ${o.cacheTable} listed under ${o.project}, mapped back to ${CONTRACT_PROJECT}`];
      },
    ],
    [
      "dry run of a wildcard table over 50 or more shards lists only the dataset's own shards and passes the gate",
      async () => {
        if (!o.wildcardPrefix) return ['skip', `no ${VARS.wildcard} given`];
        const g = await gate(`SELECT COUNT(*) AS n FROM ${C(`${o.wildcardPrefix}*`)}`);
        if (!g.ok) return ['fail', g.why ?? ''];
        const foreign = g.dry.referencedTables.filter((t) => t.projectId !== CONTRACT_PROJECT || t.datasetId !== o.dataset);
        if (foreign.length) return ['fail', `lists tables outside the dataset: ${JSON.stringify(foreign)}`];
        // Only a family of 50 or more shards reaches the gate's table limit, so only then does the pass prove that
        // the gate lets a lone wildcard through (onlyWildcardShards) rather than refusing it (review 2, section 3).
        const n = g.dry.referencedTables.length;
        if (n < MAX_REFERENCED_TABLES)
          return ['fail', `only ${n} shard(s) listed; point ${VARS.wildcard} at a family of ${MAX_REFERENCED_TABLES} or more`];
        return ['pass', `${n} shards listed, past the gate's limit of ${MAX_REFERENCED_TABLES - 1}`];
      },
    ],
    [
      'dry run of a view over another dataset is refused by the gate',
      async () => {
        if (!o.otherDatasetView) return ['skip', `no ${VARS.view} given`];
        // Only the dry-run gate's own refusal proves the claim: any other error (a mistyped view, a missing
        // permission, the network) says nothing about what the gate would do, so it fails (review 2, section 3).
        try {
          const g = await gate(`SELECT * FROM ${C(o.otherDatasetView)} LIMIT 1`);
          if (g.ok) return ['fail', `the gate passed it: ${JSON.stringify(g.dry?.referencedTables)}`];
          if (!(g.why ?? '').startsWith('dry-run gate:')) return ['fail', `refused before the dry-run gate saw it: ${g.why}`];
          return ['pass', g.why ?? ''];
        } catch (err) {
          return ['fail', `the dry run itself failed, so the gate was never tried: ${errorText(err)}`];
        }
      },
    ],
    [
      'a repeated query of a table is a cache hit billing 0 bytes; the dry run is never answered from the cache and lists the table',
      async () => {
        if (!o.cacheTable) return ['skip', `no ${VARS.table} given`];
        // A job (keepJob): nothing documents that a job-less run fills the cache. A table BigQuery may cache.
        const sql = `SELECT * FROM ${T(o.cacheTable)} LIMIT 1 /* ${run} */`;
        const first = await client.query(sql, { ...queryOpts, keepJob: true });
        if (first.totalBytesBilled <= 0)
          return ['fail', `the first run billed ${first.totalBytesBilled} bytes; it cannot show a cache hit`];
        const again = await client.query(sql, { ...queryOpts, keepJob: true });
        if (again.totalBytesBilled !== 0)
          return ['fail', `second run billed ${again.totalBytesBilled} bytes (first ${first.totalBytesBilled})`];
        const dry = await client.dryRun(sql, { ...base, timeoutMs: TIMEOUT_MS });
        if (dry.cacheHit) return ['fail', 'the dry run was answered from the cache despite useQueryCache: false'];
        if (!dry.referencedTables.some((t) => t.datasetId === o.dataset && t.tableId === o.cacheTable))
          return ['fail', `the dry run does not list the table: ${JSON.stringify(dry.referencedTables)}`];
        return ['pass', `first run billed ${first.totalBytesBilled}, the repeat 0; the dry run lists the table`];
      },
    ],
    [
      'INFORMATION_SCHEMA is never cached: a repeat bills its 10 MB minimum again',
      async () => {
        const sql = `SELECT COUNT(*) AS n, '${run}' AS run FROM ${T('INFORMATION_SCHEMA.COLUMNS')}`;
        const first = await client.query(sql, { ...queryOpts, keepJob: true });
        const again = await client.query(sql, { ...queryOpts, keepJob: true });
        const MIN = 10 * 1024 * 1024;
        if (first.totalBytesBilled < MIN || again.totalBytesBilled < MIN)
          return ['fail', `billed ${first.totalBytesBilled} then ${again.totalBytesBilled} bytes; expected at least ${MIN} each`];
        return ['pass', `billed ${first.totalBytesBilled} then ${again.totalBytesBilled} bytes`];
      },
    ],
    [
      'a query of a table past its deadline is cancelled, and what it billed (more than 0) is learned once the job is DONE',
      async () => {
        if (!o.cacheTable) return ['skip', `no ${VARS.table} given: the query must read a table to bill bytes`];
        // It reads every column of the table (at least BigQuery's 10 MB minimum), so a settlement of 0 (a 404 or a
        // missing totalBytesBilled taken as nothing billed) fails the check: it would undercount (review 2, section 3).
        const sql = `SELECT SUM(MOD(a * b + LENGTH(TO_JSON_STRING(x)), 7)) AS s, '${run}' AS run FROM (SELECT * FROM ${T(o.cacheTable)}) AS x
          CROSS JOIN UNNEST(GENERATE_ARRAY(1, 30000)) AS a CROSS JOIN UNNEST(GENERATE_ARRAY(1, 30000)) AS b`;
        /** @type {Promise<number> | null} */
        let late = null;
        try {
          await client.query(sql, {
            ...queryOpts,
            timeoutMs: 1_000,
            billedIfUnknown: -1,
            onLateBilling: (p) => {
              late = p;
            },
          });
          return ['skip', 'the query finished within 1 s; nothing to cancel'];
        } catch (err) {
          if (!(err instanceof Error) || /** @type {any} */ (err).code !== 'WAREHOUSE_TIMEOUT')
            return ['fail', `expected WAREHOUSE_TIMEOUT, got ${errorText(err)}`];
        }
        if (late === null) return ['fail', 'no late billing was reported'];
        const billed = await /** @type {Promise<number>} */ (late);
        if (billed < 0) return ['fail', 'the job never reported DONE within the settle bound'];
        if (billed === 0) return ['fail', `settled at 0 bytes billed, though the query reads ${o.cacheTable}`];
        return ['pass', `settled at ${billed} bytes billed`];
      },
    ],
    [
      "BigQuery's errors map to the documented codes: bytesBilledLimitExceeded to QUERY_TOO_EXPENSIVE, a missing table to QUERY_FAILED with the INFORMATION_SCHEMA hint",
      async () => {
        if (!o.cacheTable) return ['skip', `no ${VARS.table} given: the byte ceiling needs a query that bills bytes`];
        const over = await failureOf(() =>
          client.query(`SELECT * FROM ${T(o.cacheTable)} /* ${run} ceiling */`, { ...queryOpts, maxBytesBilled: 1 }),
        );
        if (over?.code !== 'QUERY_TOO_EXPENSIVE' || over.details?.reason !== 'bytesBilledLimitExceeded')
          return ['fail', `a 1-byte ceiling: ${over ? errorText(over) : 'the query ran'}`];
        const missing = `no_such_table_${run}`;
        const gone = await failureOf(() => client.query(`SELECT * FROM ${T(missing)}`, queryOpts));
        if (gone?.code !== 'QUERY_FAILED' || gone.details?.reason !== 'notFound' || !String(gone.message).includes(missing))
          return ['fail', `a missing table: ${gone ? errorText(gone) : 'the query ran'}`];
        if (!String(gone.message).includes('INFORMATION_SCHEMA.COLUMNS')) return ['fail', `no INFORMATION_SCHEMA hint: ${gone.message}`];
        return ['pass', `${over.code}; ${gone.code}: ${gone.message}`];
      },
    ],
    [
      'TIMESTAMP keeps every microsecond (int64 form), at both ends of the range',
      async () => {
        const r = await client.query(
          "SELECT TIMESTAMP '9999-12-31 23:59:59.999999 UTC' AS hi, TIMESTAMP '0001-01-01 00:00:00.000001 UTC' AS lo",
          queryOpts,
        );
        const want = { hi: '9999-12-31T23:59:59.999999Z', lo: '0001-01-01T00:00:00.000001Z' };
        return same(r.rows[0], want) ? ['pass', JSON.stringify(r.rows[0])] : ['fail', `got ${JSON.stringify(r.rows[0])}`];
      },
    ],
    [
      'the fast path answers a short query in one request, without a job',
      async () => {
        const r = await client.query(`SELECT 1 AS one, '${run}' AS run`, queryOpts);
        if (r.requests !== 1) return ['fail', `${r.requests} requests`];
        if (r.jobId !== null) return ['fail', `a job was created (${r.jobId})`];
        return ['pass', `queryId ${r.queryId}`];
      },
    ],
    [
      'every value type decodes to the documented JSON',
      async () => {
        const r = await client.query(
          `SELECT 1 AS i, 9007199254740993 AS big, 1.5 AS f, CAST('NaN' AS FLOAT64) AS nan, NUMERIC '-0.000000001' AS n,
        BIGNUMERIC '12345678901234567890.12345678901234567' AS bn, TRUE AS b, 'x' AS s, CAST(NULL AS STRING) AS ns, b'abc' AS by,
        DATE '2024-02-29' AS d, DATETIME '2024-02-29 12:34:56.5' AS dt, TIME '12:34:56' AS t, TIMESTAMP '2024-05-01 16:00:00.123456 UTC' AS ts,
        STRUCT(1 AS a, 'y' AS z) AS rec, [1, 2, 3] AS arr, JSON '{"a": [1, "two"]}' AS j`,
          queryOpts,
        );
        const want = {
          i: 1,
          big: '9007199254740993',
          f: 1.5,
          nan: 'NaN',
          n: '-0.000000001',
          bn: '12345678901234567890.12345678901234567',
          b: true,
          s: 'x',
          ns: null,
          by: 'YWJj',
          d: '2024-02-29',
          dt: '2024-02-29T12:34:56.500000',
          t: '12:34:56',
          ts: '2024-05-01T16:00:00.123456Z',
          rec: { a: 1, z: 'y' },
          arr: [1, 2, 3],
          j: { a: [1, 'two'] },
        };
        const got = r.rows[0] ?? {};
        const wrong = Object.keys(want).filter((k) => !same(got[k], want[k]));
        return wrong.length
          ? ['fail', wrong.map((k) => `${k}: ${JSON.stringify(got[k])}`).join('; ')]
          : ['pass', `${Object.keys(want).length} columns`];
      },
    ],
    [
      "GEOGRAPHY, INTERVAL and RANGE<TIMESTAMP> decode, and the schema keeps RANGE's element type",
      async () => {
        if (o.local) return ['skip', 'the local warehouse has no GEOGRAPHY or RANGE (docs/local-warehouse.md)'];
        const r = await client.query(
          "SELECT ST_GEOGPOINT(1, 2) AS g, INTERVAL 3 DAY AS iv, RANGE(TIMESTAMP '2024-05-01 16:00:00 UTC', NULL) AS rg",
          queryOpts,
        );
        const rg = r.schema.find((f) => f.name === 'rg');
        if (rg?.rangeElementType?.type !== 'TIMESTAMP') return ['fail', `schema: ${JSON.stringify(rg)}`];
        const row = r.rows[0] ?? {};
        if (row.rg !== '[2024-05-01T16:00:00Z, UNBOUNDED)') return ['fail', `range: ${JSON.stringify(row.rg)}`];
        return ['pass', JSON.stringify(row)];
      },
    ],
  ];

  /** @type {CheckResult[]} */
  const results = [];
  for (const [name, fn] of checks) {
    /** @type {CheckResult} */
    let result;
    try {
      const [status, detail] = await fn();
      result = { name, status, detail };
    } catch (err) {
      result = { name, status: 'fail', detail: errorText(err) };
    }
    results.push(result);
    log(`${result.status.toUpperCase().padEnd(4)}  ${name}: ${result.detail}`);
  }
  await Promise.all(background);
  return results;
}

function errorText(err) {
  if (err && typeof err === 'object' && 'code' in err) {
    const e = /** @type {any} */ (err);
    return `${e.code}: ${e.message}${e.internal ? ` (${JSON.stringify(e.internal).slice(0, 300)})` : ''}`;
  }
  return String(err);
}

/** The error `fn` throws, or null when it succeeds. */
async function failureOf(fn) {
  try {
    await fn();
    return null;
  } catch (err) {
    return /** @type {any} */ (err);
  }
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

async function main() {
  const e = process.env;
  const missing = [VARS.credentials, VARS.project, VARS.dataset].filter((k) => !e[k]);
  if (missing.length) {
    console.log(
      `test:bigquery skipped: set ${missing.join(', ')} to run the contract suite against a real BigQuery project (docs/warehouse-client.md)`,
    );
    return;
  }
  const results = await runContract({
    apiBase: e[VARS.apiBase] || 'https://bigquery.googleapis.com',
    project: /** @type {string} */ (e[VARS.project]),
    dataset: /** @type {string} */ (e[VARS.dataset]),
    location: e[VARS.location] || 'US',
    serviceAccountJson: readFileSync(/** @type {string} */ (e[VARS.credentials]), 'utf8'),
    wildcardPrefix: e[VARS.wildcard] || undefined,
    otherDatasetView: e[VARS.view] || undefined,
    cacheTable: e[VARS.table] || undefined,
    log: (line) => console.log(line),
  });
  const failed = results.filter((r) => r.status === 'fail').length;
  console.log(
    `${results.length - failed} of ${results.length} checks did not fail (${results.filter((r) => r.status === 'skip').length} skipped)`,
  );
  if (failed) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
