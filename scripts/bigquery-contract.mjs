#!/usr/bin/env node
// `npm run test:bigquery`: a short contract suite of the Worker's own BigQuery client (and the SQL guard's dry-run
// gate) against a REAL BigQuery project, for what the local warehouse can only imitate: dry runs of
// INFORMATION_SCHEMA.COLUMNS, of a wildcard and of a view over another dataset, cache hits, cancel billing, a
// client-id jobs.insert resent after a lost answer (409 duplicate), cursor pages, large-result paging, a cut result
// (one execution), the location error, error mapping, int64 timestamps, the fast path and every value type. The client is bundled from src/ with esbuild, unchanged.
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
 *   run?: string, breakClient?: (client: any) => any, wrapFetch?: (fetch: typeof globalThis.fetch) => typeof globalThis.fetch,
 *   retry?: { baseDelayMs?: number, maxDelayMs?: number }, only?: string[],
 * }} ContractOptions
 * `run` is the label value (`run`) and SQL marker of this run's jobs (random unless given, for tests that match
 * faults to them); `breakClient` wraps the client and `wrapFetch` the HTTP the client sends (outermost, so the
 * suite records what really went out), for tests that show a check fails on a wrong implementation; `retry` shortens
 * the client's backoff (tests); `only` runs the checks whose names start with one of these prefixes.
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
  /** Every request the client sent, as BigQuery received it: for the checks that count executions and job ids. */
  /** @type {WireEntry[]} */
  const wire = [];
  /** One-shot: the answer to the first request it matches is dropped after BigQuery handled it (a lost answer). */
  /** @type {((e: WireEntry) => boolean) | null} */
  let loseAnswerOf = null;
  /** @type {typeof globalThis.fetch} */
  const recorded = async (input, init) => {
    const url = new URL(String(input));
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : null;
    /** @type {WireEntry} */
    const entry = {
      method: init?.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body,
      status: 0,
      reason: null,
    };
    wire.push(entry);
    const res = await fetch(input, init);
    entry.status = res.status;
    if (!res.ok)
      entry.reason =
        (
          await res
            .clone()
            .json()
            .catch(() => null)
        )?.error?.errors?.[0]?.reason ?? null;
    if (loseAnswerOf?.(entry)) {
      loseAnswerOf = null;
      await res.arrayBuffer();
      throw new TypeError('fetch failed: the contract suite dropped this answer after BigQuery handled the request');
    }
    return res;
  };
  const deps = {
    logger: () => silent,
    waitUntil: (/** @type {Promise<unknown>} */ p) => void background.push(p),
    fetch: o.wrapFetch ? o.wrapFetch(recorded) : recorded,
    ...(o.retry ? { retry: o.retry } : {}),
  };
  const newClient = (/** @type {Record<string, unknown>} */ e) => {
    const real = createWarehouseClient(e, deps);
    return o.breakClient ? o.breakClient(real) : real;
  };
  const client = newClient(env);
  /** Requests after `from` that ran (or tried to run) a query: jobs.query, or a jobs.insert that is not a dry run. */
  const executions = (/** @type {number} */ from) => wire.slice(from).filter(isExecution);
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
      'a client-id jobs.insert whose answer is lost is resent under the same id, met by 409 duplicate, and the one job is read',
      async () => {
        const from = wire.length;
        const marker = `${run} insert`;
        // BigQuery receives and creates the job; its answer never reaches the client (a dropped connection).
        loseAnswerOf = (e) => isExecution(e) && e.status === 200 && String(e.body?.configuration?.query?.query).includes(marker);
        const r = await client.query(`SELECT n FROM UNNEST(GENERATE_ARRAY(1, 3)) AS n ORDER BY n /* ${marker} */`, {
          ...queryOpts,
          requireJob: true,
        });
        loseAnswerOf = null;
        const sent = wire.slice(from);
        const inserts = sent.filter(isExecution);
        if (inserts.length < 2 || inserts[0].path.endsWith('/queries'))
          return ['fail', `${inserts.map((e) => `${e.method} ${e.path}`).join(', ')}: expected a jobs.insert, then its resend`];
        const ids = [...new Set(inserts.map((e) => e.body?.jobReference?.jobId))];
        if (ids.length !== 1 || !ids[0]) return ['fail', `the resend used another job id (${ids.join(', ')}): two jobs run and bill`];
        const answers = inserts.map((e) => (e.status === 200 ? '200' : `${e.status} ${e.reason}`));
        if (!inserts.slice(1).every((e) => e.status === 409 && e.reason === 'duplicate'))
          return ['fail', `the resend was answered ${answers.slice(1).join(', ')}, not 409 duplicate`];
        if (r.jobId !== ids[0]) return ['fail', `the answer names job ${r.jobId}, not ${ids[0]}`];
        const others = sent.filter((e) => /\/(queries|jobs)\/[^/]+/.test(e.path) && !e.path.includes(`/${ids[0]}`));
        if (others.length) return ['fail', `read other jobs: ${others.map((e) => e.path).join(', ')}`];
        if (!same(r.rows, [{ n: 1 }, { n: 2 }, { n: 3 }])) return ['fail', `rows ${JSON.stringify(r.rows)}`];
        return ['pass', `jobs.insert sent ${inserts.length} times under one id (${answers.join(', ')}); the job's 3 rows read`];
      },
    ],
    [
      'a cursor reads further pages of the one job by startIndex: no second execution, the rows go on where the answer stopped',
      async () => {
        const from = wire.length;
        const sql = `SELECT n FROM UNNEST(GENERATE_ARRAY(1, 2500)) AS n ORDER BY n /* ${run} cursor */`;
        const first = await client.query(sql, { ...queryOpts, rowCap: 10, keepJob: true });
        if (!first.jobId || !first.location) return ['fail', 'no job kept for the cursor'];
        if (first.rows.length !== 10 || !first.truncated || first.totalRows !== 2500)
          return ['fail', `first answer: ${first.rows.length} rows, truncated ${first.truncated}, totalRows ${first.totalRows}`];
        const page = (startIndex, maxResults) =>
          client.readPage({ ...base, jobId: first.jobId, location: first.location, startIndex, maxResults, timeoutMs: TIMEOUT_MS });
        const next = await page(10, 10);
        const last = await page(2490, 100);
        const ns = (rows) => rows.map((x) => x.n);
        if (!same(ns(next.rows), range(11, 20))) return ['fail', `page at 10: ${JSON.stringify(ns(next.rows))}`];
        if (!same(ns(last.rows), range(2491, 2500))) return ['fail', `page at 2490: ${JSON.stringify(ns(last.rows))}`];
        const runs = executions(from);
        if (runs.length !== 1) return ['fail', `${runs.length} executions for one result: a cursor must read the stored result`];
        const reads = wire.slice(from).filter((e) => e.path.endsWith(`/queries/${first.jobId}`) && e.query.startIndex !== undefined);
        if (reads.length !== 2) return ['fail', `${reads.length} startIndex reads of ${first.jobId}`];
        return ['pass', `1 execution; pages at 10 and 2490 read from ${first.jobId} by startIndex`];
      },
    ],
    [
      'a result larger than one answer is paged by pageToken from its one job, every row in order',
      async () => {
        const from = wire.length;
        const n = 6000;
        const sql = `SELECT n, REPEAT('x', 64) AS pad FROM UNNEST(GENERATE_ARRAY(1, ${n})) AS n ORDER BY n /* ${run} pages */`;
        const r = await client.query(sql, { ...queryOpts, rowCap: n });
        if (r.rows.length !== n || r.truncated) return ['fail', `${r.rows.length} of ${n} rows, truncated ${r.truncated}`];
        if (!r.rows.every((x, i) => x.n === i + 1)) return ['fail', 'rows out of order or missing'];
        const runs = executions(from);
        if (runs.length !== 1) return ['fail', `${runs.length} executions`];
        const pages = wire.slice(from).filter((e) => e.query.pageToken !== undefined);
        if (pages.length === 0 || !r.jobId) return ['fail', `no pageToken read (job ${r.jobId})`];
        if (pages.some((e) => !e.path.endsWith(`/queries/${r.jobId}`))) return ['fail', 'a page was read from another job'];
        return ['pass', `${n} rows in 1 execution and ${pages.length} pageToken read(s) of ${r.jobId}`];
      },
    ],
    [
      'a result the caller cuts (byte budget) is one execution, and its cursor continues it from the same job',
      async () => {
        const from = wire.length;
        const sql = `SELECT n, REPEAT('x', 64) AS pad FROM UNNEST(GENERATE_ARRAY(1, 1500)) AS n ORDER BY n /* ${run} cut */`;
        // As run-query submits a run its transport may cut (MCP): one round trip, a job kept for the cursor.
        const r = await client.query(sql, { ...queryOpts, rowCap: 2000, keepJob: true, maxResultBytes: 16_384 });
        if (!r.truncated || r.rows.length === 0 || r.rows.length >= 1500)
          return ['fail', `not cut: ${r.rows.length} rows, truncated ${r.truncated}`];
        if (!r.jobId || !r.location) return ['fail', 'a cut result without a job: no cursor could continue it'];
        const next = await client.readPage({
          ...base,
          jobId: r.jobId,
          location: r.location,
          startIndex: r.rows.length,
          maxResults: 5,
          timeoutMs: TIMEOUT_MS,
        });
        if (next.rows[0]?.n !== r.rows.length + 1) return ['fail', `the cursor's first row is ${JSON.stringify(next.rows[0])}`];
        const runs = executions(from);
        if (runs.length !== 1)
          return ['fail', `${runs.length} executions (${runs.map((e) => `${e.method} ${e.path}`).join(', ')}): the cut result ran again`];
        return ['pass', `cut at ${r.rows.length} of 1500 rows; 1 execution; the cursor continued from job ${r.jobId}`];
      },
    ],
    [
      'a dataset outside BIGQUERY_LOCATION is the deployment error INTERNAL, never a FORBIDDEN_TABLE',
      async () => {
        if (!o.cacheTable) return ['skip', `no ${VARS.table} given: the query must read a table of the dataset`];
        const elsewhere = o.location.toUpperCase() === 'US' ? 'EU' : 'US';
        const other = newClient({ ...env, BIGQUERY_LOCATION: elsewhere });
        const err = await failureOf(() => other.query(`SELECT COUNT(*) AS n FROM ${T(o.cacheTable)} /* ${run} location */`, queryOpts));
        if (err?.code !== 'INTERNAL' || err.details?.reason !== 'notFound' || !/BIGQUERY_LOCATION/.test(String(err.message)))
          return ['fail', `location ${elsewhere}: ${err ? errorText(err) : 'the query ran'}`];
        return ['pass', `location ${elsewhere}: ${err.code}: ${err.message}`];
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
    if (o.only && !o.only.some((prefix) => name.startsWith(prefix))) continue;
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

/**
 * @typedef {{ method: string, path: string, query: Record<string, string>, body: any, status: number, reason: string | null }} WireEntry
 */

/** A request that runs (or tries to run) a query: jobs.query, or a jobs.insert that is not a dry run. */
function isExecution(/** @type {WireEntry} */ e) {
  if (e.method !== 'POST') return false;
  if (e.path.endsWith('/queries')) return e.body?.dryRun !== true;
  return e.path.endsWith('/jobs') && e.body?.configuration?.dryRun !== true;
}

/** The integers from `a` to `b`. */
function range(a, b) {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
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
