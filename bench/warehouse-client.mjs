#!/usr/bin/env node
// The warehouse client's added latency: a small query through the Worker's BigQuery client (createWarehouseClient,
// bundled from the TypeScript source and run in Node) vs the same jobs.query HTTP request sent straight to the
// local warehouse. Runs alternate between the two paths so drift (GC, DuckDB caches) hits both alike.
// Target: at most 2 ms p50 added.
// `node bench/warehouse-client.mjs [--quick] [--runs N]`, or `run()` from `npm run bench`.
import { performance } from 'node:perf_hooks';
import { createServiceAccount } from '../dev/warehouse/service-account.mjs';
import { startWarehouse } from '../dev/warehouse/server.mjs';
import { importWorkerModules } from '../scripts/lib/import-ts.mjs';
import { percentiles, runIfMain } from './stats.mjs';

const SQL = 'SELECT day, channel, orders, revenue FROM `service-v1.globex.agg__daily_revenue` ORDER BY day DESC, channel LIMIT 20';
const ROW_CAP = 10_000;
const TIMEOUT_MS = 30_000;
const MAX_BYTES_BILLED = 10 * 1024 ** 3;
const TARGET_P50_ADDED_MS = 2;

const silent = { info() {}, warn() {}, error() {} };

/**
 * @param {{ quick?: boolean; runs?: number }} [opts]
 * @returns {Promise<{ runs: number; sql: string; rowsPerQuery: number; direct: object; client: object; addedP50Ms: number; addedP99Ms: number; coldTokenMs: number; targetP50AddedMs: number; pass: boolean; rows: string[][] }>}
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
    const jwt = await bearerTokenFor(credentialFor(env, 'brand_globex'), Date.now());
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
      targetP50AddedMs: TARGET_P50_ADDED_MS,
      pass: addedP50Ms <= TARGET_P50_ADDED_MS,
      rows: [
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

await runIfMain(import.meta.url, run);
