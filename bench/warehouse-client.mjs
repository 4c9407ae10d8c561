#!/usr/bin/env node
// The warehouse client's added latency: a small query through the Worker's BigQuery client (createWarehouseClient,
// bundled from the TypeScript source and run in Node) vs the same jobs.query HTTP request sent straight to the
// local warehouse. Runs alternate between the two paths so drift (GC, DuckDB caches) hits both alike.
// Target: at most 2 ms p50 added.
// Also the warehouse round trips per query, counted in the local warehouse's request journal: a short query on the
// fast path (jobs.query, JOB_CREATION_OPTIONAL), as a job (jobs.insert with a client-chosen id), and as the client
// sent it before those changes (commit 77ad5fe^: jobs.query creating a job, replayed request by request); a long
// query that pages; a query cancelled at its deadline.
// `node bench/warehouse-client.mjs [--quick] [--runs N]`, or `run()` from `npm run bench`.
import { performance } from 'node:perf_hooks';
import { createServiceAccount } from '../dev/warehouse/service-account.mjs';
import { startWarehouse } from '../dev/warehouse/server.mjs';
import { importWorkerModules } from '../scripts/lib/import-ts.mjs';
import { workerVars } from '../scripts/lib/wrangler-toml.mjs';
import { percentiles, runIfMain } from './stats.mjs';

const SQL = 'SELECT day, channel, orders, revenue FROM `service-v1.globex.agg__daily_revenue` ORDER BY day DESC, channel LIMIT 20';
const ROW_CAP = 10_000;
const TIMEOUT_MS = 30_000;
const MAX_BYTES_BILLED = 10 * 1024 ** 3;
const TARGET_P50_ADDED_MS = 2;
/** Rows of the long query: more than one ~10 MB answer page of the warehouse. */
const LONG_ROWS = 150_000;
const LONG_SQL =
  'SELECT order_id, order_date, order_ts, customer_id, product_id, channel, quantity, revenue, currency FROM `service-v1.acme.fact__orders`';

const silent = { info() {}, warn() {}, error() {} };

/**
 * @param {{ quick?: boolean; runs?: number }} [opts]
 * @returns {Promise<{ runs: number; sql: string; rowsPerQuery: number; direct: object; client: object; addedP50Ms: number; addedP99Ms: number; coldTokenMs: number; roundTrips: { label: string; requests: number; ops: string[]; note: string }[]; targetP50AddedMs: number; pass: boolean; rows: string[][] }>}
 */
export async function run(opts = {}) {
  const runs = opts.runs ?? (opts.quick ? 100 : 500);
  const sa = createServiceAccount();
  const warehouse = await startWarehouse({ serviceAccounts: [{ clientEmail: sa.clientEmail, publicKeyPem: sa.publicKeyPem }] });
  try {
    const { createWarehouseClient, bearerTokenFor, credentialFor } = await importWorkerModules({
      'src/warehouse/bigquery-client.ts': ['createWarehouseClient'],
      'src/warehouse/jwt.ts': ['bearerTokenFor'],
      'src/warehouse/credentials.ts': ['credentialFor'],
    });
    const env = {
      // The Worker's defaults for everything else its parsed Config reads, as wrangler.toml sets them.
      ...(await workerVars()),
      BIGQUERY_API_BASE: warehouse.url,
      BIGQUERY_PROJECT: 'service-v1',
      BIGQUERY_LOCATION: 'US',
      QUERY_TIMEOUT_MS: String(TIMEOUT_MS),
      GCP_SERVICE_ACCOUNT_JSON: sa.json,
    };
    const client = createWarehouseClient(env, { logger: () => silent });
    const labels = { brand: 'brand_globex', op: 'bench' };

    // The first token costs a key import and an RSA signature; afterwards it is cached for ~55 minutes.
    const t0 = performance.now();
    const jwt = await bearerTokenFor(await credentialFor(env, 'brand_globex'), Date.now());
    const coldTokenMs = performance.now() - t0;

    // The same request the client sends, minus the client: fixed token, JSON body, parse the answer.
    const direct = async () => {
      const res = await fetch(`${warehouse.url}/bigquery/v2/projects/service-v1/queries`, {
        method: 'POST',
        headers: { authorization: `Bearer ${jwt}`, accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify({
          query: SQL,
          useLegacySql: false,
          maximumBytesBilled: String(MAX_BYTES_BILLED),
          maxResults: ROW_CAP + 1,
          timeoutMs: TIMEOUT_MS,
          location: 'US',
          labels,
          requestId: crypto.randomUUID(),
        }),
      });
      const body = await res.json();
      if (!res.ok || !body.jobComplete) throw new Error(`warehouse answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
      return body.rows.length;
    };
    const viaClient = async () => {
      const r = await client.query(SQL, {
        brandId: 'brand_globex',
        requestId: 'req_bench',
        labels,
        maxBytesBilled: MAX_BYTES_BILLED,
        rowCap: ROW_CAP,
        timeoutMs: TIMEOUT_MS,
      });
      return r.rows.length;
    };

    const trips = await roundTrips({ warehouse, client, jwt, labels });

    const [nDirect, nClient] = [await direct(), await viaClient()];
    if (nDirect !== nClient || nDirect === 0) throw new Error(`row counts differ: direct ${nDirect}, client ${nClient}`);
    for (let i = 0; i < 30; i++) {
      await direct();
      await viaClient();
    }
    /** @type {number[]} */
    const ds = [];
    /** @type {number[]} */
    const cs = [];
    for (let i = 0; i < runs; i++) {
      /** @type {[() => Promise<unknown>, number[]][]} */
      const order =
        i % 2
          ? [
              [direct, ds],
              [viaClient, cs],
            ]
          : [
              [viaClient, cs],
              [direct, ds],
            ];
      for (const [fn, samples] of order) {
        const t = performance.now();
        await fn();
        samples.push(performance.now() - t);
      }
    }
    const d = percentiles(ds);
    const c = percentiles(cs);
    const addedP50Ms = c.p50 - d.p50;
    const addedP99Ms = c.p99 - d.p99;
    const f = (n) => `${n.toFixed(2)} ms`;
    return {
      runs,
      sql: SQL,
      rowsPerQuery: nClient,
      direct: d,
      client: c,
      addedP50Ms,
      addedP99Ms,
      coldTokenMs,
      roundTrips: trips,
      targetP50AddedMs: TARGET_P50_ADDED_MS,
      pass: addedP50Ms <= TARGET_P50_ADDED_MS,
      rows: [
        ...trips.map((t) => [`round trips: ${t.label}`, String(t.requests), t.ops.join(' + '), t.note]),
        ['direct jobs.query', `p50 ${f(d.p50)}`, `p99 ${f(d.p99)}`, `${runs} runs`],
        ['via client', `p50 ${f(c.p50)}`, `p99 ${f(c.p99)}`, `${runs} runs`],
        [
          'added by client',
          `p50 ${f(addedP50Ms)}`,
          `p99 ${f(addedP99Ms)}`,
          `target p50 <= ${TARGET_P50_ADDED_MS} ms: ${addedP50Ms <= TARGET_P50_ADDED_MS ? 'met' : 'MISSED'}`,
        ],
        ['first token (import + sign)', f(coldTokenMs), 'then cached ~55 min', ''],
      ],
    };
  } finally {
    await warehouse.close();
  }
}

/**
 * Warehouse round trips per query, from the warehouse's own request journal (every BigQuery call it received).
 * @returns {Promise<{ label: string; requests: number; ops: string[]; note: string }[]>}
 */
async function roundTrips({ warehouse, client, jwt, labels }) {
  const base = { brandId: 'brand_globex', requestId: 'req_bench_trips', labels, maxBytesBilled: MAX_BYTES_BILLED, timeoutMs: TIMEOUT_MS };
  /** @type {{ label: string; requests: number; ops: string[]; note: string }[]} */
  const out = [];
  const count = async (label, fn) => {
    warehouse.requests.clear();
    const note = await fn();
    const ops = warehouse.requests.list().map((e) => e.op);
    out.push({ label, requests: ops.length, ops, note });
  };
  const api = `${warehouse.url}/bigquery/v2/projects/service-v1`;
  const call = async (method, path, query, body) => {
    const qs = query ? `?${new URLSearchParams(query)}` : '';
    const res = await fetch(`${api}${path}${qs}`, {
      method,
      headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  // The client's requests before the fast path and client-chosen job ids (77ad5fe^, bigquery-client.ts query()):
  // jobs.query without jobCreationMode (a job every time), getQueryResults while incomplete and for each further
  // page, and jobs.get for the bytes billed when the answer had none.
  const before = async (sql, rowCap) => {
    let first = await call('POST', '/queries', undefined, {
      query: sql,
      useLegacySql: false,
      maximumBytesBilled: String(MAX_BYTES_BILLED),
      maxResults: rowCap + 1,
      timeoutMs: TIMEOUT_MS,
      location: 'US',
      labels,
      requestId: crypto.randomUUID(),
    });
    const jobId = first.jobReference?.jobId;
    const path = `/queries/${encodeURIComponent(jobId)}`;
    while (!first.jobComplete) first = await call('GET', path, { location: 'US', maxResults: String(rowCap + 1), timeoutMs: '10000' });
    let rows = first.rows?.length ?? 0;
    let pageToken = first.pageToken;
    while (rows < rowCap + 1 && pageToken) {
      const page = await call('GET', path, { location: 'US', pageToken, maxResults: String(rowCap + 1 - rows) });
      rows += page.rows?.length ?? 0;
      pageToken = page.pageToken;
    }
    if (first.totalBytesBilled === undefined && jobId) await call('GET', `/jobs/${encodeURIComponent(jobId)}`, { location: 'US' });
    return `${Math.min(rows, rowCap)} rows, job ${jobId ? 'created' : 'none'}`;
  };
  // Each scenario's SQL carries a marker so no query-cache hit from an earlier scenario changes its path.
  const marked = (sql, tag) => sql.replace('SELECT ', `SELECT /* ${tag} */ `);

  await count('short, fast path (now)', async () => {
    const r = await client.query(marked(SQL, 'fast'), { ...base, rowCap: ROW_CAP });
    return `${r.rows.length} rows, job ${r.jobId === null ? 'none' : 'created'}`;
  });
  await count('short, as a job (requireJob)', async () => {
    const r = await client.query(marked(SQL, 'job'), { ...base, rowCap: ROW_CAP, requireJob: true });
    return `${r.rows.length} rows, client-chosen job id`;
  });
  await count('short, before (77ad5fe^)', () => before(marked(SQL, 'before'), ROW_CAP));
  await count(`long, ${LONG_ROWS} rows (now)`, async () => {
    const r = await client.query(marked(LONG_SQL, 'long'), { ...base, rowCap: LONG_ROWS });
    return `${r.rows.length} rows`;
  });
  await count(`long, ${LONG_ROWS} rows, before (77ad5fe^)`, () => before(marked(LONG_SQL, 'longbefore'), LONG_ROWS));
  // A job still running at its 1 s deadline: cancelled, then jobs.get until DONE so what it billed is counted.
  await count('cancelled at its 1 s deadline (now)', async () => {
    warehouse.faults.arm({ kind: 'slowJob', ms: 3_000, match: { sql: '/* cancel */' } });
    /** @type {Promise<number> | undefined} */
    let late;
    try {
      await client.query(marked(SQL, 'cancel'), { ...base, rowCap: ROW_CAP, timeoutMs: 1_000, onLateBilling: (p) => (late = p) });
      return 'finished (unexpected)';
    } catch (err) {
      return `${/** @type {{ code?: string }} */ (err).code}, settled ${await late} bytes billed`;
    }
  });
  out.push({
    label: 'cancelled, before (77ad5fe^)',
    requests: 3,
    ops: ['query', 'cancel', 'get'],
    note: 'from git history, not replayed: one jobs.get right after the cancel, while the job still ran: settled 0 bytes',
  });
  return out;
}

await runIfMain(import.meta.url, run);
