// `npm run bench -- --soak [--minutes N]`: a long run of mixed traffic against `npm run dev`, sampling the memory
// of its workerd processes, to show whether the Worker stays flat. The figure: RSS growth per 10,000 requests after
// warm-up (the least-squares slope of RSS over requests served, times 10,000). Target: flat.
//
//   node bench/soak.mjs [--minutes N] [--concurrency N] [--keys N] [--root DIR] [--label NAME]
//
// `--root DIR` runs the `npm run dev` of another checkout (e.g. a worktree at an older commit, to measure "before"),
// with this checkout's traffic. Many distinct SQL texts, keys, tables, search terms and memories are used, so a
// per-isolate cache that grows with its input would show.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../scripts/lib/import-ts.mjs';
import { d1Execute, sql } from '../scripts/lib/d1.mjs';
import { freePort } from '../test/node/free-port.mjs';

const MiB = 1024 * 1024;
const SAMPLE_MS = 5_000;
const READY_TIMEOUT_MS = 240_000;
const DATASETS = [
  ['brand_acme', 'acme'],
  ['brand_globex', 'globex'],
];
const TABLES = ['agg__daily_revenue', 'fact__orders', 'dim__products', 'dim__customers', 'report__monthly_kpis', 'raw__web_events'];

function options(argv) {
  const { values } = parseArgs({
    args: argv.filter((a) => a !== '--soak'),
    options: {
      minutes: { type: 'string', default: '10' },
      concurrency: { type: 'string', default: '8' },
      keys: { type: 'string', default: '2000' },
      root: { type: 'string' },
      label: { type: 'string', default: 'soak' },
      quick: { type: 'boolean', default: false },
    },
    strict: false,
  });
  const num = (name, v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${v}`);
    return n;
  };
  return {
    minutes: num('minutes', values.minutes),
    concurrency: Math.floor(num('concurrency', values.concurrency)),
    keys: Math.floor(num('keys', values.keys)),
    root: values.root ? resolve(String(values.root)) : ROOT,
    label: String(values.label),
  };
}

/** `npm run dev` of `root` on a free port with a throwaway state directory; resolves once it says it is ready. */
async function startDev(root) {
  const stateDir = await mkdtemp(join(tmpdir(), 'soak-dev-'));
  const port = await freePort();
  let log = '';
  const child = spawn(process.execPath, [join(root, 'dev/run-dev.mjs'), '--port', String(port), '--state-dir', stateDir], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(stateDir, { recursive: true, force: true });
  };
  try {
    await new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`npm run dev not ready in ${READY_TIMEOUT_MS} ms:\n${log}`)), READY_TIMEOUT_MS);
      child.stdout.on('data', () => {
        if (/\[dev\] ready in/.test(log)) {
          clearTimeout(timer);
          done(undefined);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        fail(new Error(`npm run dev exited (${code}) before it was ready:\n${log}`));
      });
    });
    const credentials = JSON.parse(await readFile(join(stateDir, 'credentials.json'), 'utf8'));
    return { pid: /** @type {number} */ (child.pid), url: `http://127.0.0.1:${port}`, stateDir, keys: credentials.keys, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Every process under `rootPid` (its descendants), from /proc. */
async function descendants(rootPid) {
  const parent = new Map();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces or parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === rootPid) {
        out.push(pid);
        break;
      }
    }
  }
  return out;
}

/** RSS in bytes of each workerd process under `rootPid`, by pid. */
async function workerdRss(rootPid) {
  const out = {};
  for (const pid of await descendants(rootPid)) {
    try {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      if (!/^Name:\s+workerd$/m.test(status)) continue;
      const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN);
      if (Number.isFinite(kb)) out[pid] = kb * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The port wrangler's devtools inspector listens on, from the command line of the wrangler under `rootPid`. */
async function inspectorPortOf(rootPid) {
  for (const pid of await descendants(rootPid)) {
    try {
      const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      const at = args.indexOf('--inspector-port');
      if (at >= 0) return Number(args[at + 1]);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/**
 * A devtools session on the Worker's isolate through wrangler's inspector proxy: `liveHeap()` collects garbage,
 * then answers V8's used heap in bytes (what the isolate really retains, without the allocator's slack in RSS).
 */
async function openInspector(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const target = targets.find((t) => typeof t.webSocketDebuggerUrl === 'string');
  if (!target) throw new Error(`no inspector target on port ${port}: ${JSON.stringify(targets)}`);
  // wrangler's proxy refuses a client that names no Origin but sends a User-Agent (as Node's WebSocket does); undici's
  // WebSocket takes headers in its non-standard init argument.
  const ws = new WebSocket(target.webSocketDebuggerUrl, /** @type {any} */ ({ headers: { origin: 'http://127.0.0.1' } }));
  await new Promise((done, fail) => {
    setTimeout(() => fail(new Error(`inspector ${target.webSocketDebuggerUrl} did not open in 10 s`)), 10_000);
    ws.addEventListener('open', done, { once: true });
    ws.addEventListener('error', () => fail(new Error(`inspector ${target.webSocketDebuggerUrl} refused the connection`)), { once: true });
  });
  let id = 0;
  const pending = new Map();
  ws.addEventListener('message', (ev) => {
    const msg = JSON.parse(String(ev.data));
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.error) p.fail(new Error(`${msg.error.message}`));
    else p.done(msg.result);
  });
  const call = (method, params = {}) =>
    new Promise((done, fail) => {
      const n = ++id;
      pending.set(n, { done, fail });
      setTimeout(() => {
        if (pending.delete(n)) fail(new Error(`inspector: no answer to ${method} in 10 s`));
      }, 10_000);
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  return {
    async liveHeap() {
      await call('HeapProfiler.collectGarbage');
      const usage = /** @type {{ usedSize: number }} */ (await call('Runtime.getHeapUsage'));
      return usage.usedSize;
    },
    close: () => ws.close(),
  };
}

/** `count` org keys of org_demo with limits no soak reaches, inserted straight into the instance's local D1. */
async function addKeys(dev, root, count) {
  const secrets = [];
  const rows = [];
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    const secret = `wqk_soak${String(i).padStart(8, '0')}${'0'.repeat(32)}`;
    secrets.push(secret);
    const hash = createHash('sha256').update(secret).digest('hex');
    rows.push(sql`(${`key_soak${i}`}, ${`soak ${i}`}, ${secret.slice(0, 12)}, ${hash}, ${'org_demo'}, ${now}, 1)`);
  }
  const target = { persistTo: join(dev.stateDir, 'wrangler-state'), cwd: root };
  const statements = [];
  for (let i = 0; i < rows.length; i += 200) {
    statements.push(
      `INSERT INTO api_keys (id, name, prefix, secret_hash, org_id, created_at, memories_write) VALUES ${rows.slice(i, i + 200).join(', ')};`,
    );
  }
  statements.push(
    'UPDATE api_keys SET daily_query_limit = 1000000000, daily_bytes_limit = NULL, checks_per_minute = 1000000, page_reads_per_minute = 1000000;',
  );
  await d1Execute(target, { command: statements.join('\n') });
  return secrets;
}

/** The traffic: request `i` of the run, spread over REST runs, MCP calls, reports, tables, memories and searches. */
function requestFor(i, url, keys) {
  const key = keys[i % keys.length];
  const auth = { authorization: `Bearer ${key}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const [brandId, dataset] = DATASETS[i % DATASETS.length];
  const table = TABLES[i % TABLES.length];
  // Distinct SQL text on every run: the verdict cache sees a new key each time.
  const distinctSql = `SELECT day, channel, revenue FROM \`service-v1.${dataset}.agg__daily_revenue\` WHERE revenue > ${i} ORDER BY day DESC LIMIT 5`;
  const mcp = (name, args) => ({
    method: 'POST',
    path: '/v1/data/mcp',
    headers: { ...json, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name, arguments: args } }),
    kind: `mcp ${name}`,
  });
  switch (i % 20) {
    case 0:
    case 1:
    case 2:
    case 3:
      return {
        method: 'POST',
        path: '/v1/data/query',
        headers: json,
        body: JSON.stringify({ sql: distinctSql, brandId }),
        kind: 'rest query',
      };
    case 4:
      return mcp('run_query', { sql: distinctSql, brandId });
    case 5:
      return mcp('list_brands', {});
    case 6:
      return mcp('describe_table', { brandId, table });
    case 7:
      return mcp('search', { query: `revenue ${i} ${table}` });
    case 8:
      return mcp('list_reports', {});
    case 9:
      return { method: 'GET', path: '/v1/data/reports', headers: auth, kind: 'rest reports' };
    case 10:
      return { method: 'GET', path: `/v1/data/brands/${brandId}/tables/${table}`, headers: auth, kind: 'rest table' };
    case 11:
      return { method: 'GET', path: `/v1/data/brands/${brandId}/tables`, headers: auth, kind: 'rest tables' };
    case 12:
      return { method: 'GET', path: '/v1/data/brands', headers: auth, kind: 'rest brands' };
    case 13:
      return {
        method: 'POST',
        path: '/v1/data/memories',
        headers: json,
        body: JSON.stringify({ brandId, table, title: `soak note ${i}`, content: `Soak memory ${i}: ${'x'.repeat(i % 400)}` }),
        kind: 'rest memory create',
      };
    case 14:
      return { method: 'GET', path: `/v1/data/memories?brandId=${brandId}&limit=20`, headers: auth, kind: 'rest memories' };
    case 15:
      return { method: 'GET', path: '/v1/data/queries', headers: auth, kind: 'rest saved queries' };
    case 16:
      return { method: 'GET', path: '/v1/data/brands', headers: { authorization: `Bearer wqk_unknown${i}` }, kind: 'rest unknown key' };
    case 17:
      return mcp('list_memories', { brandId });
    case 18:
      return {
        method: 'POST',
        path: '/v1/data/query',
        headers: json,
        body: JSON.stringify({ sql: distinctSql, brandId, dryRun: true }),
        kind: 'rest dry run',
      };
    default:
      return { method: 'GET', path: '/healthz', headers: {}, kind: 'healthz' };
  }
}

/** Least-squares slope of ys over xs. */
function slope(xs, ys) {
  const n = xs.length;
  if (n < 2) return NaN;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let k = 0; k < n; k++) {
    num += (xs[k] - mx) * (ys[k] - my);
    den += (xs[k] - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

/** @param {string[]} argv */
export async function soak(argv) {
  if (typeof WebSocket === 'undefined') {
    // Node 20 has WebSocket (for the inspector session) only behind a flag; Node 22 and later have it.
    const child = spawn(process.execPath, ['--experimental-websocket', '--no-warnings', new URL(import.meta.url).pathname, ...argv], {
      stdio: 'inherit',
    });
    const code = await new Promise((done) => child.once('exit', done));
    if (code !== 0) throw new Error(`the soak run exited ${code}`);
    return;
  }
  const opts = options(argv);
  const durationMs = opts.minutes * 60_000;
  console.log(`soak: starting npm run dev of ${opts.root} ...`);
  const dev = await startDev(opts.root);
  let stopAt = 0;
  try {
    const extra = await addKeys(dev, opts.root, opts.keys);
    const keys = [dev.keys.org, ...extra];
    console.log(`soak: ${dev.url}, ${keys.length} keys, ${opts.concurrency} at a time, ${opts.minutes} min`);
    const statuses = {};
    const byKind = {};
    let served = 0;
    let failures = 0;
    let next = 0;
    const started = Date.now();
    stopAt = started + durationMs;
    const samples = [];
    const port = await inspectorPortOf(dev.pid);
    const inspector =
      port === null ? null : await openInspector(port).catch((err) => (console.log(`soak: no V8 heap figures: ${err.message}`), null));
    const sample = async () => {
      const rss = await workerdRss(dev.pid);
      const total = Object.values(rss).reduce((a, b) => a + b, 0);
      // The proxy answers once it is attached to the isolate (the first seconds): a sample it misses has no heap figure.
      const heap = inspector
        ? await inspector.liveHeap().catch((err) => (console.log(`soak: no heap figure in this sample: ${err.message}`), null))
        : null;
      samples.push({ atS: (Date.now() - started) / 1000, requests: served, rssBytes: total, byPid: rss, heapBytes: heap });
    };
    await sample();
    const sampler = setInterval(() => void sample(), SAMPLE_MS);
    const loop = async () => {
      while (Date.now() < stopAt) {
        const i = next++;
        const r = requestFor(i, dev.url, keys);
        const t0 = performance.now();
        try {
          const res = await fetch(new URL(r.path, dev.url), {
            method: r.method,
            headers: r.headers,
            body: r.body,
            signal: AbortSignal.timeout(60_000),
          });
          await res.arrayBuffer();
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          const k = (byKind[r.kind] ??= {});
          k[res.status] = (k[res.status] ?? 0) + 1;
          k.ms = (k.ms ?? 0) + (performance.now() - t0);
        } catch {
          failures++;
        }
        served++;
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, loop));
    clearInterval(sampler);
    await sample();
    inspector?.close();

    // Warm-up: the first third of the run (JIT, the first fill of every cache, D1's page cache).
    const warm = samples.filter((s) => s.atS >= (durationMs / 1000) * (1 / 3));
    const perTenK = slope(
      warm.map((s) => s.requests),
      warm.map((s) => s.rssBytes),
    );
    const heaps = warm.filter((s) => typeof s.heapBytes === 'number');
    const heapPerTenK = slope(
      heaps.map((s) => s.requests),
      heaps.map((s) => s.heapBytes),
    );
    const first = warm[0];
    const last = warm[warm.length - 1];
    const result = {
      at: new Date().toISOString(),
      label: opts.label,
      root: opts.root,
      minutes: opts.minutes,
      concurrency: opts.concurrency,
      keys: keys.length,
      requests: served,
      requestsPerSec: served / ((Date.now() - started) / 1000),
      networkFailures: failures,
      statuses,
      byKind,
      rssStartMiB: samples[0].rssBytes / MiB,
      rssAfterWarmupMiB: first ? first.rssBytes / MiB : NaN,
      rssEndMiB: last ? last.rssBytes / MiB : NaN,
      rssPeakMiB: Math.max(...samples.map((s) => s.rssBytes)) / MiB,
      growthMiBPer10kRequests: (perTenK * 10_000) / MiB,
      heapAfterWarmupMiB: heaps.length ? heaps[0].heapBytes / MiB : null,
      heapEndMiB: heaps.length ? heaps[heaps.length - 1].heapBytes / MiB : null,
      heapGrowthMiBPer10kRequests: heaps.length > 1 ? (heapPerTenK * 10_000) / MiB : null,
      samples,
    };
    const outDir = join(ROOT, 'bench', 'out');
    await mkdir(outDir, { recursive: true });
    const file = join(outDir, `${opts.label}.json`);
    await writeFile(file, JSON.stringify(result, null, 2) + '\n');
    const f = (n) => n.toFixed(1);
    console.log(
      [
        `requests ${served} (${f(result.requestsPerSec)}/s), network failures ${failures}, statuses ${JSON.stringify(statuses)}`,
        `workerd RSS (all processes): start ${f(result.rssStartMiB)} MiB, after warm-up ${f(result.rssAfterWarmupMiB)} MiB, ` +
          `end ${f(result.rssEndMiB)} MiB, peak ${f(result.rssPeakMiB)} MiB`,
        `RSS growth after warm-up: ${f(result.growthMiBPer10kRequests)} MiB per 10,000 requests (target: flat)`,
        result.heapGrowthMiBPer10kRequests === null
          ? 'V8 heap: not reachable through the inspector'
          : `V8 heap after a forced GC: after warm-up ${f(result.heapAfterWarmupMiB)} MiB, end ${f(result.heapEndMiB)} MiB, ` +
            `growth ${f(result.heapGrowthMiBPer10kRequests)} MiB per 10,000 requests`,
        `written: ${file}`,
      ].join('\n'),
    );
    return result;
  } finally {
    await dev.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  soak(process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
