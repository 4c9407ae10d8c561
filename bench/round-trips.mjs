// Warehouse round trips per answer, and what the Worker adds to a warehouse that answers in 50 ms, called by
// bench/run.mjs with the stack it started (the built bundle in workerd, wired to the local warehouse).
//
// Every BigQuery call is delayed 50 ms by the local warehouse's `latency` fault (docs/local-warehouse.md), so the
// figures look like a deployment's, where each call crosses the network to Google. Round trips are counted in the
// warehouse's own request journal (every call it received), never inferred from the client:
//   new query       REST, SQL never seen before: the dry run, then one jobs.query
//   repeated query  REST, the same SQL again: the verdict cache answers the gate, so one jobs.query
//   cut result      MCP run_query of ~1,750 rows, cut at the tool result's byte limit: one execution (a job kept)
//   next page       REST /v1/data/query/page with that cut result's cursor: one getQueryResults, no execution
//   5xx on submit   REST, jobs.query answered 503: the client-id jobs.insert fallback (insert, results, jobs.get)
// Latency: REST and MCP p50 of a repeated and of a new query against the same calls sent straight to the warehouse
// (one jobs.query; the dry run plus one jobs.query), measured in this run, interleaved.
import { performance } from 'node:perf_hooks';
import { signServiceAccountJwt } from '../dev/warehouse/service-account.mjs';
import { DEV_PROJECT } from '../dev/warehouse/demo-data.mjs';
import { mcp, rest } from './mcp.mjs';
import { percentiles } from './stats.mjs';

/** The per-call delay of the warehouse while this bench runs. */
export const LATENCY_MS = 50;
/** What the Worker should add at most to a warehouse answering in LATENCY_MS (issue 34). */
const TARGET_ADDED_MS = 10;
const LEGACY = '2025-11-25';
const SQL = 'SELECT day, channel, revenue FROM `service-v1.globex.agg__daily_revenue` ORDER BY day DESC, channel LIMIT 10';

/**
 * @param {{ quick?: boolean, url: string | URL, keys: { org: string }, warehouse: any, sa: { json: string } }} opts
 */
export async function run({ quick = false, url, keys, warehouse, sa }) {
  const n = quick ? 20 : 80;
  const key = keys.org;
  const brandId = 'brand_globex';
  const latency = { kind: 'latency', ms: LATENCY_MS, persistent: true };
  let fault = warehouse.faults.arm(latency);
  /** Arms `spec` ahead of the latency fault (the first armed fault that matches a request is the one applied). */
  const armFirst = (spec) => {
    warehouse.faults.clear(fault.id);
    warehouse.faults.arm(spec);
    fault = warehouse.faults.arm(latency);
  };
  try {
    const trips = await roundTrips({ url, key, brandId, warehouse, armFirst });
    const timing = await latencies({ n, url, key, brandId, warehouse, sa });
    const rows = [
      ...trips.map((t) => [`round trips: ${t.label}`, `${t.calls} call(s), ${t.executions} execution(s)`, t.ops.join(' + '), t.expected]),
      ...timing.rows,
    ];
    return { latencyMs: LATENCY_MS, runs: n, roundTrips: trips, latency: timing.figures, targetAddedMs: TARGET_ADDED_MS, rows };
  } finally {
    warehouse.faults.clear(fault.id);
  }
}

/** Journal entries that ran (or tried to run) a query: jobs.query, or a jobs.insert that is not a dry run. */
function isExecution(e) {
  return e.op === 'query' || (e.op === 'insert' && e.body?.configuration?.dryRun !== true);
}

/** The warehouse calls one answer took, from the journal: cleared before, read after. */
async function counted(warehouse, label, expected, fn) {
  warehouse.requests.clear();
  const note = await fn();
  const entries = warehouse.requests.list();
  const ops = entries.map((e) =>
    e.op === 'insert' && e.body?.configuration?.dryRun ? 'dry run' : `${e.op}${e.status === 200 ? '' : ` ${e.status}`}`,
  );
  return { label, calls: entries.length, executions: entries.filter(isExecution).length, ops, expected, note };
}

async function roundTrips({ url, key, brandId, warehouse, armFirst }) {
  const tag = `rt${Date.now().toString(36)}`;
  const yesterday = new Date(Date.parse(`${warehouse.today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  const fresh = `${SQL} /* ${tag} new */`;
  const out = [];
  out.push(await counted(warehouse, 'new query (REST)', 'dry run + 1', () => rest(url, key, '/v1/data/query', { sql: fresh, brandId })));
  out.push(await counted(warehouse, 'repeated query (REST)', '1', () => rest(url, key, '/v1/data/query', { sql: fresh, brandId })));
  // A plain MCP run_query runs as REST's does (one jobs.query, its job kept for the cursor); only one still running
  // after LONG_QUERY_WAIT_MS becomes a long query.
  const mcpSql = `${SQL} /* ${tag} mcp */`;
  const mcpRun = () => mcp(url, key, LEGACY, 'tools/call', { name: 'run_query', arguments: { sql: mcpSql, brandId } });
  out.push(await counted(warehouse, 'new query (MCP)', 'dry run + 1', mcpRun));
  out.push(await counted(warehouse, 'repeated query (MCP)', '1', mcpRun));
  /** @type {string | null} */
  let cursor = null;
  out.push(
    await counted(warehouse, "cut result (MCP, a day's orders)", '1 execution', async () => {
      const sql = `SELECT * FROM \`service-v1.acme.fact__orders\` WHERE order_date = DATE '${yesterday}' /* ${tag} cut */`;
      const res = JSON.parse(await mcp(url, key, LEGACY, 'tools/call', { name: 'run_query', arguments: { sql, brandId: 'brand_acme' } }));
      // The rows' JSON is the text content (structuredContent too when the client asks for it).
      const data = res.result?.structuredContent ?? JSON.parse(res.result?.content?.[0]?.text ?? 'null');
      if (!data) throw new Error(`run_query answered ${JSON.stringify(res).slice(0, 600)}`);
      if (!data.truncated || !data.nextCursor) throw new Error(`the cut result was not cut: ${data.rowCount} rows`);
      cursor = data.nextCursor;
      return `${data.rowCount} of ${data.totalRows} rows`;
    }),
  );
  out.push(
    await counted(warehouse, 'next page (REST cursor)', '1, no execution', async () => {
      const page = JSON.parse(await rest(url, key, '/v1/data/query/page', { cursor }));
      return `${page.rows.length} rows`;
    }),
  );
  out.push(
    await counted(warehouse, '5xx on submit (REST)', 'dry run + failed jobs.query + insert fallback', async () => {
      const sql = `${SQL} /* ${tag} 5xx */`;
      armFirst({ kind: 'http503', count: 1, match: { op: 'query', sql: `${tag} 5xx` } });
      const body = JSON.parse(await rest(url, key, '/v1/data/query', { sql, brandId }));
      return `${body.rows.length} rows`;
    }),
  );
  return out;
}

async function latencies({ n, url, key, brandId, warehouse, sa }) {
  const jwt = signServiceAccountJwt(sa.json);
  const api = `${warehouse.url}/bigquery/v2/projects/${DEV_PROJECT}`;
  const direct = async (path, body) => {
    const res = await fetch(`${api}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`warehouse answered ${res.status}: ${await res.text()}`);
    await res.json();
  };
  const real = SQL.replaceAll('service-v1', DEV_PROJECT);
  // What the Worker sends at the least: one jobs.query (a repeated query), or the dry run first (a new one).
  const queryBody = (sql) => ({
    query: sql,
    useLegacySql: false,
    maxResults: 2000,
    timeoutMs: 30_000,
    jobCreationMode: 'JOB_CREATION_OPTIONAL',
  });
  const dryBody = (sql) => ({ configuration: { dryRun: true, query: { query: sql, useLegacySql: false, useQueryCache: false } } });
  /** Server-Timing p50 per phase, per REST series: the Worker's own account of where the time went. */
  /** @type {Record<string, Map<string, number[]>>} */
  const phases = {};
  const restTimed = (name) => async (/** @type {string} */ sql) => {
    const res = await fetch(new URL('/v1/data/query', url), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql, brandId }),
    });
    if (!res.ok) throw new Error(`/v1/data/query answered ${res.status}: ${await res.text()}`);
    await res.text();
    const m = (phases[name] ??= new Map());
    const seen = (m.get('') ?? [0])[0];
    m.set('', [seen + 1]);
    for (const part of (res.headers.get('server-timing') ?? '').split(',')) {
      const hit = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
      // A phase a request did not have (the dry run of a cached verdict) counts 0 for it.
      if (hit) m.set(hit[1], [...(m.get(hit[1]) ?? Array(seen).fill(0)), Number(hit[2])]);
    }
    for (const [k, v] of m) if (k !== '' && v.length === seen) v.push(0);
  };
  let i = 0;
  const unique = () => `${SQL} /* lat ${Date.now().toString(36)} ${i++} */`;
  /** @type {Record<string, () => Promise<unknown>>} */
  const series = {
    'direct: jobs.query': () => direct('/queries', queryBody(real)),
    // The local stack's own cost per request (Miniflare's ingress proxy, a Worker that answers at once).
    'GET /healthz': async () => {
      const res = await fetch(new URL('/healthz', url));
      await res.text();
    },
    'direct: dry run + jobs.query': async () => {
      const sql = unique().replaceAll('service-v1', DEV_PROJECT);
      await direct('/jobs', dryBody(sql));
      await direct('/queries', queryBody(sql));
    },
    'REST repeated query': () => restTimed('REST repeated query')(SQL),
    'REST new query': () => restTimed('REST new query')(unique()),
    'MCP repeated query': () => mcp(url, key, LEGACY, 'tools/call', { name: 'run_query', arguments: { sql: SQL, brandId } }),
    'MCP new query': () => mcp(url, key, LEGACY, 'tools/call', { name: 'run_query', arguments: { sql: unique(), brandId } }),
  };
  /** @type {Record<string, number[]>} */
  const samples = Object.fromEntries(Object.keys(series).map((k) => [k, []]));
  for (const fn of Object.values(series)) for (let w = 0; w < 3; w++) await fn();
  // Interleaved, so a drift of the shared machine's load hits every series alike.
  for (let r = 0; r < n; r++) {
    for (const [name, fn] of Object.entries(series)) {
      const t = performance.now();
      await fn();
      samples[name].push(performance.now() - t);
    }
  }
  const p = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, percentiles(v)]));
  const one = p['direct: jobs.query'].p50;
  const two = p['direct: dry run + jobs.query'].p50;
  const against = {
    'REST repeated query': one,
    'REST new query': two,
    'MCP repeated query': one,
    'MCP new query': two,
  };
  const f = (x) => `${x.toFixed(1)} ms`;
  const ingress = p['GET /healthz'].p50;
  const rows = [
    ['GET /healthz (the local stack per request)', `p50 ${f(ingress)}`, `p99 ${f(p['GET /healthz'].p99)}`, 'baseline, no warehouse call'],
    [`direct jobs.query at ${LATENCY_MS} ms`, `p50 ${f(one)}`, `p99 ${f(p['direct: jobs.query'].p99)}`, 'baseline, 1 call'],
    [
      `direct dry run + jobs.query at ${LATENCY_MS} ms`,
      `p50 ${f(two)}`,
      `p99 ${f(p['direct: dry run + jobs.query'].p99)}`,
      'baseline, 2 calls',
    ],
  ];
  /** @type {Record<string, { p50: number, p99: number, baselineP50: number, addedP50Ms: number, ratio: number, addedLessIngressP50Ms: number }>} */
  const figures = {};
  for (const [name, base] of Object.entries(against)) {
    const s = p[name];
    const added = s.p50 - base;
    // Less the local stack's own per-request cost, which a deployment does not have (no Miniflare proxy).
    const own = added - ingress;
    figures[name] = { p50: s.p50, p99: s.p99, baselineP50: base, addedP50Ms: added, ratio: s.p50 / base, addedLessIngressP50Ms: own };
    rows.push([
      `${name} at ${LATENCY_MS} ms`,
      `p50 ${f(s.p50)}`,
      `p99 ${f(s.p99)}`,
      `+${f(added)} p50 (${(s.p50 / base).toFixed(2)}x); less /healthz +${f(own)}; target +${TARGET_ADDED_MS} ms: ${own <= TARGET_ADDED_MS ? 'met' : 'MISSED'}`,
    ]);
  }
  /** @type {Record<string, Record<string, number>>} */
  const serverTiming = {};
  for (const [name, m] of Object.entries(phases)) {
    serverTiming[name] = Object.fromEntries([...m].filter(([k]) => k !== '').map(([k, v]) => [k, percentiles(v).p50]));
    rows.push([
      `  ${name}: Server-Timing p50`,
      Object.entries(serverTiming[name])
        .map(([k, v]) => `${k} ${v.toFixed(1)}`)
        .join(', '),
      '',
      '',
    ]);
  }
  return {
    figures: { serverTiming, direct: { oneCall: p['direct: jobs.query'], twoCalls: p['direct: dry run + jobs.query'] }, ...figures },
    rows,
  };
}

// `node bench/round-trips.mjs [--quick] [--profile] [bundle dir]`: this bench alone, on a bundle `npm run bench` built
// (bench/out/bundle by default; build one with `npx wrangler deploy --dry-run --outdir bench/out/bundle`).
// `--profile` then takes a V8 CPU profile of the Worker over 100 repeated REST and MCP queries at 50 ms per warehouse
// call (bench/out/round-trips-*.cpuprofile, loadable in Chrome DevTools) and prints the isolate's CPU per call and
// the functions with the most self time.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { join } = await import('node:path');
  const { mkdir, writeFile } = await import('node:fs/promises');
  const { ROOT } = await import('../scripts/lib/import-ts.mjs');
  const { startStack } = await import('./stack.mjs');
  const { inspector, selfTimes } = await import('./profile.mjs');
  const profile = process.argv.includes('--profile');
  const inspectorPort = 9229 + 2000 + Math.floor(Math.random() * 1000);
  const bundleDir = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? join(ROOT, 'bench', 'out', 'bundle');
  const stack = await startStack({ bundleDir, ...(profile ? { inspectorPort } : {}) });
  try {
    const { rows, ...figures } = await run({ quick: process.argv.includes('--quick'), ...stack });
    for (const r of rows) console.log(r.join('  '));
    console.log(JSON.stringify(figures, null, 2));
    if (profile) {
      const cdp = await inspector(inspectorPort);
      await mkdir(join(ROOT, 'bench', 'out'), { recursive: true });
      const warehouse = /** @type {any} */ (stack.warehouse);
      const fault = warehouse.faults.arm({ kind: 'latency', ms: LATENCY_MS, persistent: true });
      const calls = 100;
      const kinds = {
        rest: () => rest(stack.url, stack.keys.org, '/v1/data/query', { sql: SQL, brandId: 'brand_globex' }),
        mcp: () =>
          mcp(stack.url, stack.keys.org, LEGACY, 'tools/call', { name: 'run_query', arguments: { sql: SQL, brandId: 'brand_globex' } }),
      };
      for (const [kind, call] of Object.entries(kinds)) {
        await cdp.send('Profiler.start');
        for (let j = 0; j < calls; j++) await call();
        const { result } = await cdp.send('Profiler.stop');
        await writeFile(join(ROOT, 'bench', 'out', `round-trips-${kind}.cpuprofile`), JSON.stringify(result.profile));
        const { totalMs, top } = selfTimes(result.profile, calls);
        console.log(`\nprofile ${kind} repeated query: ${totalMs.toFixed(3)} ms of isolate CPU per call; most self time, µs per call:`);
        for (const [fn, us] of top) console.log(`  ${us.toFixed(0).padStart(5)}  ${fn}`);
      }
      warehouse.faults.clear(fault.id);
      cdp.close();
    }
  } finally {
    await stack.close();
  }
}
