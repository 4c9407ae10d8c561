#!/usr/bin/env node
// `npm run bench`: measures the service against the local stack it starts itself (the local warehouse and the
// built Worker bundle in Miniflare/workerd), prints a table and writes bench/results.json.
// Every figure is reported beside a baseline measured in the same run, as the issues ask.
import { spawn } from 'node:child_process';
import { createSign } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { ROOT } from '../scripts/lib/import-ts.mjs';
import { startStack } from './stack.mjs';
import { DEV_PROJECT } from '../dev/warehouse/demo-data.mjs';
import { percentiles, timeSequential } from './stats.mjs';

const OUT_DIR = join(ROOT, 'bench', 'out');
const BUNDLE_DIR = join(OUT_DIR, 'bundle');
const QUICK = process.argv.includes('--quick');
const LOAD_SECONDS = QUICK ? 2 : 8;
const LOAD_CONNECTIONS = 20;
const QUERY_RUNS = QUICK ? 60 : 300;
const SMALL_SQL = 'SELECT day, channel, revenue FROM `service-v1.globex.agg__daily_revenue` ORDER BY day DESC, channel LIMIT 10';

const KiB = 1024;
const LIMITS = { jsGzip: 450 * KiB, totalGzip: 1.5 * 1024 * KiB };

function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${out}`))));
  });
}

/** Bundle as `wrangler deploy` would upload it, and its gzip sizes (what the Workers size limits count). */
async function measureBundle() {
  await rm(BUNDLE_DIR, { recursive: true, force: true });
  await run(process.execPath, [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', BUNDLE_DIR], {
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
  });
  const files = [];
  for (const name of await readdir(BUNDLE_DIR, { recursive: true })) {
    const path = join(BUNDLE_DIR, name);
    if (!(await stat(path)).isFile() || name.endsWith('.map') || name.endsWith('README.md')) continue;
    const buf = await readFile(path);
    files.push({ name, bytes: buf.length, gzip: gzipSync(buf, { level: 9 }).length });
  }
  const js = files.filter((f) => /\.(m?js)$/.test(f.name));
  const sum = (xs, k) => xs.reduce((a, f) => a + f[k], 0);
  return {
    files,
    jsBytes: sum(js, 'bytes'),
    jsGzip: sum(js, 'gzip'),
    totalBytes: sum(files, 'bytes'),
    totalGzip: sum(files, 'gzip'),
    limits: LIMITS,
  };
}

async function load(url, path, headers) {
  const result = await autocannon({ url: new URL(path, url).toString(), connections: LOAD_CONNECTIONS, duration: LOAD_SECONDS, headers });
  const non2xx = result.non2xx + result.errors;
  return {
    path,
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx,
  };
}

function base64url(buf) {
  return Buffer.from(buf).toString('base64url');
}

/** A self-signed service-account JWT, exactly what the Worker's client sends, for the direct baseline. */
function serviceAccountJwt(sa) {
  const parsed = JSON.parse(sa.json);
  const now = Math.floor(Date.now() / 1000);
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: parsed.private_key_id }));
  const claims = base64url(
    JSON.stringify({
      iss: parsed.client_email,
      sub: parsed.client_email,
      aud: 'https://bigquery.googleapis.com/',
      iat: now,
      exp: now + 3600,
    }),
  );
  const signer = createSign('RSA-SHA256');
  signer.update(`${header}.${claims}`);
  return `${header}.${claims}.${base64url(signer.sign(parsed.private_key))}`;
}

/** POST /v1/data/query vs the same query straight to the local warehouse (jobs.query), sequential. */
async function queryOverhead(stack) {
  const jwt = serviceAccountJwt(stack.sa);
  const direct = async () => {
    // What the Worker sends for it: the deployment's own project (the stack's warehouse runs DEV_PROJECT, as the
    // Worker's BIGQUERY_PROJECT), the SQL's service-v1 mapped to it, the fast path.
    const res = await fetch(`${stack.warehouse.url}/bigquery/v2/projects/${DEV_PROJECT}/queries`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: SMALL_SQL.replaceAll('service-v1', DEV_PROJECT),
        useLegacySql: false,
        maxResults: 2000,
        timeoutMs: 30000,
        jobCreationMode: 'JOB_CREATION_OPTIONAL',
      }),
    });
    if (!res.ok) throw new Error(`warehouse answered ${res.status}: ${await res.text()}`);
    await res.json();
  };
  const phases = new Map();
  const viaWorker = async () => {
    const res = await fetch(new URL('/v1/data/query', stack.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.keys.org}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: SMALL_SQL, brandId: 'brand_globex' }),
    });
    if (!res.ok) throw new Error(`worker answered ${res.status}: ${await res.text()}`);
    await res.json();
    // The Worker's own account of where the time went (Server-Timing), per phase.
    for (const part of (res.headers.get('server-timing') ?? '').split(',')) {
      const m = /^\s*([\w-]+);dur=([\d.]+)/.exec(part);
      if (m) phases.set(m[1], [...(phases.get(m[1]) ?? []), Number(m[2])]);
    }
  };
  // Warm both paths (JIT, connection pools, the Worker's JWT and verdict caches).
  for (let i = 0; i < 10; i++) {
    await direct();
    await viaWorker();
  }
  const directStats = await timeSequential(QUERY_RUNS, direct);
  phases.clear();
  const workerStats = await timeSequential(QUERY_RUNS, viaWorker);
  return {
    sql: SMALL_SQL,
    runs: QUERY_RUNS,
    direct: directStats,
    worker: workerStats,
    overheadP50Ms: workerStats.p50 - directStats.p50,
    overheadP99Ms: workerStats.p99 - directStats.p99,
    serverTimingP50Ms: Object.fromEntries([...phases].map(([k, v]) => [k, percentiles(v).p50])),
    target: 'guard + limiter + client overhead; see component figures',
  };
}

async function componentBenches() {
  const out = {};
  for (const [name, path] of [
    ['guard', './guard.mjs'],
    ['warehouseClient', './warehouse-client.mjs'],
    ['usage', './usage.mjs'],
    ['queryLog', './query-log.mjs'],
    ['paging', './paging.mjs'],
    ['discovery', './discovery.mjs'],
    ['historyPage', './history-page.mjs'],
  ]) {
    try {
      const mod = await import(path);
      out[name] = await mod.run({ quick: QUICK });
    } catch (err) {
      out[name] = { error: err instanceof Error ? err.message : String(err) };
    }
  }
  return out;
}

const fmt = (n, d = 2) => (typeof n === 'number' ? n.toFixed(d) : String(n));
const kib = (n) => `${(n / KiB).toFixed(1)} KiB`;

async function main() {
  await mkdir(OUT_DIR, { recursive: true });
  console.log('building the bundle (wrangler deploy --dry-run) ...');
  const bundle = await measureBundle();
  console.log('starting the local warehouse and the bundle in workerd ...');
  const main = bundle.files.find((f) => f.name === 'index.js') ?? bundle.files.find((f) => f.name.endsWith('.js'));
  const stack = await startStack({ bundleDir: BUNDLE_DIR, scriptName: main?.name });
  const results = { at: new Date().toISOString(), quick: QUICK, node: process.version, bundle, startup: stack.startup };
  try {
    console.log(`load: ${LOAD_CONNECTIONS} connections, ${LOAD_SECONDS}s per route ...`);
    const auth = { authorization: `Bearer ${stack.keys.org}` };
    const baseline = await load(stack.url, '/healthz', {});
    const brands = await load(stack.url, '/v1/data/brands', auth);
    const reports = await load(stack.url, '/v1/data/reports', auth);
    results.load = {
      baseline,
      routes: [brands, reports].map((r) => ({ ...r, throughputRatio: r.requestsPerSec / baseline.requestsPerSec })),
      target: 'throughputRatio >= 0.60',
    };
    console.log(`query overhead: ${QUERY_RUNS} sequential runs each way ...`);
    results.query = await queryOverhead(stack);
    results.mcp = await import('./mcp.mjs').then((m) => m.run({ quick: QUICK, url: stack.url, keys: stack.keys }));
    console.log('warehouse round trips per answer, and the added latency at 50 ms per warehouse call ...');
    results.roundTrips = await import('./round-trips.mjs').then((m) => m.run({ quick: QUICK, ...stack }));
  } finally {
    await stack.close();
  }
  console.log('component benchmarks ...');
  results.components = await componentBenches();

  await writeFile(join(ROOT, 'bench', 'results.json'), JSON.stringify(results, null, 2) + '\n');

  const rows = [
    ['bundle JS gzip', kib(bundle.jsGzip), `limit ${kib(LIMITS.jsGzip)}`, fmt(bundle.jsGzip / LIMITS.jsGzip) + ' of limit'],
    [
      'bundle total gzip (wasm incl.)',
      kib(bundle.totalGzip),
      `limit ${kib(LIMITS.totalGzip)}`,
      fmt(bundle.totalGzip / LIMITS.totalGzip) + ' of limit',
    ],
    ['startup: workerd ready', `${fmt(stack.startup.miniflareReadyMs, 0)} ms`, '', ''],
    ['startup: first request after ready', `${fmt(stack.startup.firstRequestMs, 1)} ms`, '', ''],
  ];
  if (results.load) {
    rows.push([
      'GET /healthz (baseline)',
      `${fmt(results.load.baseline.requestsPerSec, 0)} req/s`,
      `p50 ${results.load.baseline.p50Ms} ms p99 ${results.load.baseline.p99Ms} ms`,
      '1.00',
    ]);
    for (const r of results.load.routes) {
      rows.push([
        `GET ${r.path}`,
        `${fmt(r.requestsPerSec, 0)} req/s`,
        `p50 ${r.p50Ms} ms p99 ${r.p99Ms} ms${r.non2xx ? ` (${r.non2xx} non-2xx!)` : ''}`,
        `${fmt(r.throughputRatio)} of baseline`,
      ]);
    }
  }
  if (results.query) {
    const q = results.query;
    rows.push(['warehouse direct (small query)', `p50 ${fmt(q.direct.p50)} ms`, `p99 ${fmt(q.direct.p99)} ms`, '1.00']);
    rows.push([
      'POST /v1/data/query (same query)',
      `p50 ${fmt(q.worker.p50)} ms`,
      `p99 ${fmt(q.worker.p99)} ms`,
      `${fmt(q.worker.p50 / q.direct.p50)}x direct; +${fmt(q.overheadP50Ms)} ms p50`,
    ]);
    rows.push([
      '  Server-Timing p50 by phase',
      Object.entries(q.serverTimingP50Ms)
        .map(([k, v]) => `${k} ${fmt(v, 1)}`)
        .join(', '),
      '',
      '',
    ]);
  }
  for (const row of results.roundTrips?.rows ?? []) rows.push(row);
  for (const [name, r] of Object.entries(results.components)) {
    if (r && Array.isArray(r.rows)) for (const row of r.rows) rows.push([`${name}: ${row[0]}`, ...row.slice(1).map(String)]);
    else rows.push([name, r?.error ? `not measured: ${r.error}` : JSON.stringify(r).slice(0, 80), '', '']);
  }
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  console.log('\n' + rows.map((r) => r.map((c, i) => String(c ?? '').padEnd(widths[i])).join('  ')).join('\n'));
  console.log('\nwritten: bench/results.json');
}

// `--soak [--minutes N]`: the long mixed-traffic run against `npm run dev` instead (bench/soak.mjs).
const entry = process.argv.includes('--soak') ? () => import('./soak.mjs').then((m) => m.soak(process.argv.slice(2))) : main;
entry().catch((err) => {
  console.error(err);
  process.exit(1);
});
