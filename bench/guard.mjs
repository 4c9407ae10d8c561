#!/usr/bin/env node
// The SQL guard's cost and worst case, and the measurements behind the parser choice (docs/sql-guard.md, docs/architecture.md security model 2b).
//
// 1. checkSql on a realistic ~2 KiB and ~100 KiB analytic query: p50/p99 (targets: < 1 ms and < 20 ms p50),
//    beside the bare parse of the same text by each candidate parser: @guanmingchiu/sqlparser-ts
//    (datafusion-sqlparser-rs in WASM, BigQuery dialect: the one the guard uses) and node-sql-parser 5.4.0
//    (BigQuery build).
// 2. Adversarial inputs within the size limit (deep brackets, STRUCT( / CAST( / ARRAY[ nesting, unterminated
//    strings, long join chains, the keyword-retry blow-ups the prescan bounds, inputs sized to sit just under
//    the prescan's work bound): the guard's time (target < 50 ms for every input) and each bare parser's time.
//    Bare parsers run in a worker thread with a time limit, since some of these inputs never finish.
// 3. A random fuzz over the constructs that make the parser retry: the guard's worst time over N inputs.
// 4. Cold start: compiling and instantiating the 3.5 MB WASM module, and the first parse after it.
//
// The guard's TypeScript is bundled with esbuild; the .wasm import becomes a WebAssembly.Module compiled from the
// file (Node only; the Worker gets it from wrangler as a CompiledWasm module). Figures are after a warm-up, so
// V8 has tiered the WASM up as a long-lived isolate would have; the cold figures are separate.
// `node bench/guard.mjs [--quick]`, or `run()` from `npm run bench`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { importTs } from '../scripts/lib/import-ts.mjs';
import { percentiles } from './stats.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const WASM_PATH = join(ROOT, 'node_modules/@guanmingchiu/sqlparser-ts/wasm/sqlparser_rs_wasm_bg.wasm');
const GLUE_PATH = join(ROOT, 'node_modules/@guanmingchiu/sqlparser-ts/wasm/sqlparser_rs_wasm.js');
const NSP_PATH = join(ROOT, 'node_modules/node-sql-parser/build/bigquery.js');
const SCOPE = { project: 'service-v1', dataset: 'acme' };
const TARGETS = { p50Ms2k: 1, p50Ms100k: 20, worstMs: 50 };
const RAW_LIMIT_MS = 3000;

/** The guard module (src/sql/guard.ts) bundled for Node, its .wasm import compiled from the file. */
function loadGuard() {
  return importTs({ entry: 'src/sql/guard.ts' });
}

// ---------------------------------------------------------------------------------------------------------------
// Workloads

const T = (t) => `\`service-v1.acme.${t}\``;

/** One CTE of a realistic report query (~700 characters). */
function reportCte(i) {
  return `cte_${i} AS (
  SELECT o.channel, DATE_TRUNC(o.order_date, MONTH) AS month, COUNT(DISTINCT o.customer_id) AS customers,
         SUM(o.revenue) AS revenue, SAFE_DIVIDE(SUM(o.revenue), COUNT(*)) AS aov,
         ARRAY_AGG(STRUCT(o.order_id AS id, o.quantity AS qty) ORDER BY o.order_ts DESC LIMIT 5) AS recent
  FROM ${T('fact__orders')} AS o
  JOIN ${T('dim__customers')} AS c USING (customer_id)
  WHERE o.order_date BETWEEN DATE_SUB(CURRENT_DATE(), INTERVAL ${(i % 90) + 1} DAY) AND CURRENT_DATE()
    AND c.segment IN ('retail', 'wholesale') AND o.channel != 'x;y -- not a comment' -- a comment
  GROUP BY 1, 2
  QUALIFY ROW_NUMBER() OVER (PARTITION BY o.channel ORDER BY revenue DESC) <= 10
)`;
}

/** A ~2 KiB report query: two CTEs, a join of them, a window function, CASE and QUALIFY. */
function smallReportQuery() {
  return `WITH ${reportCte(0)},
${reportCte(1)}
SELECT a.channel, a.month, a.revenue, b.revenue AS revenue_prev,
       SAFE_DIVIDE(a.revenue - b.revenue, b.revenue) AS growth,
       CASE WHEN a.customers > 100 THEN 'large' WHEN a.customers > 10 THEN 'medium' ELSE 'small' END AS size,
       RANK() OVER (PARTITION BY a.month ORDER BY a.revenue DESC) AS rank_in_month
FROM cte_0 AS a
LEFT JOIN cte_1 AS b ON b.channel = a.channel AND b.month = DATE_SUB(a.month, INTERVAL 1 MONTH)
WHERE a.revenue > 0
QUALIFY rank_in_month <= 3
ORDER BY a.month DESC, rank_in_month`;
}

/** A report query of about `bytes` characters: n CTEs unioned. */
function reportQuery(bytes) {
  const make = (n) =>
    `WITH ${Array.from({ length: n }, (_, i) => reportCte(i)).join(',\n')}\nSELECT * FROM ${Array.from({ length: n }, (_, i) => `cte_${i}`).join(' UNION ALL SELECT * FROM ')}`;
  let n = 1;
  while (make(n + 1).length <= bytes) n++;
  return make(n);
}

const within = (limit, f) => {
  let n = 1;
  while (f(n * 2).length <= limit) n *= 2;
  let lo = n;
  let hi = n * 2;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (f(mid).length <= limit) lo = mid;
    else hi = mid;
  }
  return f(lo);
};

const columnList = (n) => Array.from({ length: n }, (_, i) => `o.c${i}`).join(', ');
/** About 300 bytes per level of nested joins, as in the issue's report (12 levels, 4 KiB). */
const NESTED_JOIN_COLUMNS = columnList(24);

/** `FROM ((SELECT <columns> FROM ((SELECT ... ) JOIN u ON ...)) JOIN u ON ...)`, `levels` deep. */
function nestedJoins(levels, columns) {
  return (
    `SELECT * FROM ${`((SELECT ${columns} FROM `.repeat(levels)}${T('fact__orders')} AS o` +
    Array.from({ length: levels }, (_, i) => `) JOIN ${T('dim__customers')} AS c${i} ON c${i}.customer_id = o.customer_id)`).join('')
  );
}

/** Adversarial inputs, each within the size limit. `expect` is what the guard must answer (ok or a code). */
function adversarialInputs(limit) {
  const terms = (n) => Array(n).fill('1').join(' + ');
  const joinChain = (n) => `SELECT * FROM ${T('t0')}${Array.from({ length: n }, (_, i) => ` JOIN ${T(`t${i + 1}`)} USING (id)`).join('')}`;
  const list = [
    // The issue's measurements of node-sql-parser: depth 2 ~50 ms, 3 244 ms, 4 1.2 s, 5 6.8 s.
    ['brackets [[1 +]] depth 2', 'SELECT [[1 +]] FROM t'],
    ['brackets [[[1 +]]] depth 3', 'SELECT [[[1 +]]] FROM t'],
    ['brackets [[[[1 +]]]] depth 4', 'SELECT [[[[1 +]]]] FROM t'],
    ['brackets [[[[[1 +]]]]] depth 5', 'SELECT [[[[[1 +]]]]] FROM t'],
    ['STRUCT( depth 3, malformed', `SELECT ${'STRUCT('.repeat(3)}1 +${')'.repeat(3)} FROM t`],
    ['CAST( depth 3, malformed', `SELECT ${'CAST('.repeat(3)}1 +${')'.repeat(3)} FROM t`],
    ['brackets depth 10, malformed', `SELECT ${'['.repeat(10)}1 +${']'.repeat(10)} FROM t`],
    ['parentheses depth 31 (deepest accepted)', `SELECT ${'('.repeat(31)}1${')'.repeat(31)}`],
    ['parentheses depth 48', `SELECT ${'('.repeat(48)}1${')'.repeat(48)}`],
    ['100 KiB of (', within(limit, (n) => `SELECT ${'('.repeat(n)}`)],
    ['100 KiB of [', within(limit, (n) => `SELECT ${'['.repeat(n)}`)],
    ['STRUCT( depth 8, malformed', `SELECT ${'STRUCT('.repeat(8)}1 +${')'.repeat(8)}`],
    ['100 KiB of STRUCT(', within(limit, (n) => `SELECT ${'STRUCT('.repeat(n)}`)],
    ['CAST( depth 10, malformed', `SELECT ${'CAST('.repeat(10)}1 +${')'.repeat(10)}`],
    ['CAST( depth 16, malformed', `SELECT ${'CAST('.repeat(16)}1 +${')'.repeat(16)}`],
    ['CAST( depth 30, unclosed', `SELECT ${'CAST('.repeat(30)}1 +`],
    ['100 KiB of CAST(', within(limit, (n) => `SELECT ${'CAST('.repeat(n)}`)],
    ['ARRAY[ depth 12, malformed', `SELECT ${'ARRAY['.repeat(12)}1 +${']'.repeat(12)}`],
    ['100 KiB of ARRAY[', within(limit, (n) => `SELECT ${'ARRAY['.repeat(n)}`)],
    ['POSITION( depth 8, malformed', `SELECT ${'POSITION('.repeat(8)}1 +${')'.repeat(8)}`],
    ['NOT -( depth 14, malformed', `SELECT ${'NOT -('.repeat(14)}1 +${')'.repeat(14)}`],
    ['INTERVAL chain of 14', `SELECT ${'INTERVAL '.repeat(14)}1 +`],
    ['CASE WHEN ( depth 12', `SELECT ${'CASE WHEN ('.repeat(12)}1 +${') THEN 1 END'.repeat(12)}`],
    ['100 KiB NOT chain', within(limit, (n) => `SELECT ${'NOT '.repeat(n)}1`)],
    ['100 KiB unterminated string', within(limit, (n) => `SELECT '${'a'.repeat(n)}`)],
    ['100 KiB unterminated identifier', within(limit, (n) => `SELECT \`${'a'.repeat(n)}`)],
    ['100 KiB unterminated comment', within(limit, (n) => `SELECT 1 /* ${'a'.repeat(n)}`)],
    ['100 KiB string literal', within(limit, (n) => `SELECT '${'a'.repeat(n)}' AS s`)],
    ['100 KiB join chain', within(limit, joinChain)],
    ['100 KiB 1 + 1 + ... chain', within(limit, (n) => `SELECT ${terms(n)}`)],
    ['100 KiB 1 + ... + (malformed)', within(limit, (n) => `SELECT ${terms(n)} +`)],
    ['100 KiB IN list', within(limit, (n) => `SELECT 1 FROM ${T('t')} WHERE x IN (${Array(n).fill('1').join(',')})`)],
    ['100 KiB of columns', within(limit, (n) => `SELECT ${Array(n).fill('a').join(', ')} FROM ${T('t')}`)],
    ['100 KiB CASE with many WHENs', within(limit, (n) => `SELECT CASE ${'WHEN a THEN 1 '.repeat(n)}END FROM ${T('t')}`)],
    [
      '100 KiB UNION ALL chain',
      within(limit, (n) =>
        Array(n)
          .fill(`SELECT 1 FROM ${T('t')}`)
          .join(' UNION ALL '),
      ),
    ],
    ['100 KiB of CTEs', within(limit, (n) => `WITH ${Array.from({ length: n }, (_, i) => `c${i} AS (SELECT 1)`).join(', ')} SELECT 1`)],
    [
      '100 KiB of scalar subqueries',
      within(
        limit,
        (n) =>
          `SELECT ${Array(n)
            .fill(`(SELECT MAX(x) FROM ${T('t')})`)
            .join(', ')}`,
      ),
    ],
    // Correlated array paths (each resolved against the range variables in scope) and pipe syntax.
    [
      '100 KiB chain of alias paths',
      within(limit, (n) => `SELECT 1 FROM ${T('t')} AS a0${Array.from({ length: n }, (_, i) => `, a${i}.x AS a${i + 1}`).join('')}`),
    ],
    ['100 KiB pipe chain', within(limit, (n) => `FROM ${T('t')}${' |> WHERE x > 1'.repeat(n)}`)],
    [
      '100 KiB of FROM-first subqueries',
      within(
        limit,
        (n) =>
          `SELECT 1 FROM ${Array(n)
            .fill(`(FROM ${T('t')})`)
            .join(', ')}`,
      ),
    ],
    // Nested parenthesised joins: the parser reads `(` in FROM as a derived table first, then as a nested join, and
    // parses the inner bracket twice per level (before the prescan charged it: 12 levels 2 s, 14 levels 7 s).
    ['nested parenthesised joins, 12 levels', nestedJoins(12, NESTED_JOIN_COLUMNS)],
    ['nested parenthesised joins, 14 levels', nestedJoins(14, NESTED_JOIN_COLUMNS)],
    ['nested parenthesised joins at the nesting limit (16 levels, 32 brackets)', nestedJoins(16, NESTED_JOIN_COLUMNS)],
    ['nested parenthesised joins, 6 levels (accepted)', nestedJoins(6, NESTED_JOIN_COLUMNS)],
  ];
  // Nested joins sized to sit just under the work bound: k levels around as many columns as the bound allows.
  for (const k of [4, 8, 10]) {
    list.push([
      `nested parenthesised joins x${k} at the work bound`,
      (budget, work) => {
        let lo = 1;
        let hi = 4000;
        while (lo < hi) {
          const mid = Math.ceil((lo + hi) / 2);
          if (work(nestedJoins(k, columnList(mid))) <= budget) lo = mid;
          else hi = mid - 1;
        }
        return nestedJoins(k, columnList(lo));
      },
    ]);
  }
  // Inputs sized to sit just under the prescan's work bound: k retrying levels around a malformed payload.
  for (const [open, close, k] of /** @type {[string, string, number][]} */ ([
    ['CAST(', ')', 2],
    ['CAST(', ')', 5],
    ['CAST(', ')', 9],
    ['POSITION(', ')', 4],
    ['NOT -(', ')', 7],
    ['INTERVAL ', '', 6],
    ['INTERVAL -(', ')', 6],
    ['ARRAY[', ']', 7],
    ['SUBSTRING(', ')', 7],
    ['CASE WHEN (', ') THEN 1 END', 6],
  ])) {
    list.push([
      `${open.trim()} x${k} around a payload at the work bound`,
      (budget) => {
        const factor = open === 'POSITION(' ? 4 : 2;
        const n = Math.max(1, Math.floor((budget * 0.97) / (2 * factor ** k)));
        return `SELECT ${open.repeat(k)}${terms(n)} +${close.repeat(k)}`;
      },
    ]);
  }
  return list;
}

// ---------------------------------------------------------------------------------------------------------------
// Bare parsers in a worker thread, with a time limit (some adversarial inputs take seconds to hours).

const RAW_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { performance } = require('node:perf_hooks');
(async () => {
  let parse;
  if (workerData.parser === 'wasm') {
    const glue = await import(workerData.gluePath);
    glue.initSync({ module: new WebAssembly.Module(readFileSync(workerData.wasmPath)) });
    parse = (sql) => glue.parse_sql('bigquery', sql);
  } else {
    const { Parser } = require(workerData.nspPath);
    const p = new Parser();
    parse = (sql) => p.astify(sql, { database: 'bigquery' });
  }
  // A trap (the parser's WebAssembly stack overflowing) leaves the instance unusable: report it and exit.
  const time = (sql) => {
    const t = performance.now();
    let ok = true;
    try { parse(sql); } catch (e) { if (e instanceof WebAssembly.RuntimeError || e instanceof RangeError) return ['trap', performance.now() - t]; ok = false; }
    return [performance.now() - t, ok];
  };
  for (let i = 0; i < 20; i++) time('SELECT CAST(a AS INT64), [1, 2], STRUCT(1 AS x) FROM t WHERE b IN (SELECT c FROM u)');
  parentPort.on('message', (sql) => parentPort.postMessage(time(sql)));
  parentPort.postMessage('ready');
})();
`;

class RawParser {
  constructor(parser) {
    this.parser = parser;
    /** @type {Worker | undefined} set by start() */
    this.worker = undefined;
  }

  async start() {
    const worker = new Worker(RAW_WORKER, {
      eval: true,
      workerData: { parser: this.parser, gluePath: pathToFileURL(GLUE_PATH).href, wasmPath: WASM_PATH, nspPath: NSP_PATH },
    });
    this.worker = worker;
    await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  }

  /** The worker start() made; using the parser before start() is a bug in this bench. */
  get running() {
    if (!this.worker) throw new Error('RawParser used before start()');
    return this.worker;
  }

  /** Best of `runs` parses of `sql` in ms, or null when one run exceeded RAW_LIMIT_MS (the worker is replaced). */
  async time(sql, runs = 3) {
    let best = Infinity;
    let ok = false;
    for (let i = 0; i < runs; i++) {
      const answer = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(null), RAW_LIMIT_MS);
        this.running.once('message', (m) => {
          clearTimeout(timer);
          resolve(m);
        });
        this.running.postMessage(sql);
      });
      if (answer === null || answer[0] === 'trap') {
        await this.running.terminate();
        await this.start();
        return answer === null ? { ms: null, ok: false } : { ms: answer[1], ok: false, trap: true };
      }
      best = Math.min(best, answer[0]);
      ok = answer[1];
      if (answer[0] > 500) break;
    }
    return { ms: best, ok };
  }

  async close() {
    await this.running.terminate();
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function timeGuard(guard, sql, runs) {
  const samples = [];
  let verdict;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    verdict = await guard.checkSql(sql, SCOPE);
    samples.push(performance.now() - t);
  }
  return { ...percentiles(samples), verdict };
}

/**
 * A random expression over the constructs that make the parser retry (CAST, NOT, INTERVAL, CASE, POSITION,
 * SUBSTRING, ARRAY[...]) and the ones that nest (brackets, subqueries, STRUCT, operator chains), with a syntax
 * error planted at a random depth in a third of them: the error is what makes every enclosing level retry.
 */
function fuzzInput(rand) {
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const broken = rand() < 0.34;
  let planted = false;
  const expr = (depth) => {
    if (depth <= 0 || rand() < 0.08) {
      if (broken && !planted && rand() < 0.5) {
        planted = true;
        return pick(['1 +', 'AS', ')', 'CAST(', 'NOT', '* *']);
      }
      return pick(['1', 'x', "'s'", 'revenue', "DATE '2024-01-01'"]);
    }
    const e = () => expr(depth - 1);
    return pick([
      () => `CAST(${e()} AS INT64)`,
      () => `SAFE_CAST(${e()} AS STRING)`,
      () => `NOT ${e()}`,
      () => `NOT -(${e()})`,
      () => `INTERVAL ${e()} DAY`,
      () => `CASE WHEN ${e()} THEN ${e()} ELSE ${e()} END`,
      () => `POSITION(${e()} IN ${e()})`,
      () => `SUBSTRING(${e()}, 1, 2)`,
      () => `ARRAY[${e()}, ${e()}]`,
      () => `STRUCT(${e()} AS a)`,
      () => `(${e()})`,
      () => `${e()} + ${e()}`,
      () => `${e()} AND ${e()}`,
      () => `${e()} BETWEEN ${e()} AND ${e()}`,
      () => `f(${e()}, ${e()})`,
      () => `(SELECT ${e()} FROM \`service-v1.acme.t\`)`,
      () => `EXISTS (SELECT 1 FROM \`service-v1.acme.t\` WHERE ${e()})`,
    ])();
  };
  return `SELECT ${expr(4 + Math.floor(rand() * 12))} FROM \`service-v1.acme.fact__orders\``;
}

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const fmt = (ms) => (ms === null ? `> ${RAW_LIMIT_MS} ms` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`);

/**
 * @param {{ quick?: boolean }} [opts]
 */
export async function run(opts = {}) {
  const quick = Boolean(opts.quick);
  const wasmBytes = readFileSync(WASM_PATH);

  // Cold start: compile + instantiate, then the first 2 KiB parse, in a fresh thread.
  const cold = await new Promise((resolve, reject) => {
    const w = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const { readFileSync } = require('node:fs');
       (async () => {
         const glue = await import(workerData.gluePath);
         const bytes = readFileSync(workerData.wasmPath);
         const t0 = performance.now();
         const module = new WebAssembly.Module(bytes);
         const t1 = performance.now();
         glue.initSync({ module });
         const t2 = performance.now();
         glue.parse_sql('bigquery', workerData.sql);
         const t3 = performance.now();
         parentPort.postMessage({ compileMs: t1 - t0, instantiateMs: t2 - t1, firstParseMs: t3 - t2 });
       })();`,
      { eval: true, workerData: { gluePath: pathToFileURL(GLUE_PATH).href, wasmPath: WASM_PATH, sql: smallReportQuery() } },
    );
    w.once('message', (m) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });

  const guard = await loadGuard();
  const { prescan } = await importTs({ entry: 'src/sql/prescan.ts' });
  /** The prescan's work estimate of a text (Infinity when it refuses it). */
  const work = (sql) => {
    const pre = prescan(sql);
    return pre.ok ? pre.work : Infinity;
  };
  const limit = guard.MAX_SQL_LENGTH;
  const q2k = smallReportQuery();
  const q100k = reportQuery(limit);

  // Warm-up: a long-lived isolate has tiered the WASM up; give V8 the same chance here.
  const warmUntil = performance.now() + (quick ? 1500 : 4000);
  while (performance.now() < warmUntil) {
    await guard.checkSql(q2k, SCOPE);
    await guard.checkSql(q100k, SCOPE);
    await guard.checkSql(`SELECT ${'CAST('.repeat(6)}1 +${')'.repeat(6)}`, SCOPE);
  }

  const wasmRaw = new RawParser('wasm');
  const nspRaw = new RawParser('nsp');
  await Promise.all([wasmRaw.start(), nspRaw.start()]);

  try {
    const sizes = {};
    for (const [name, sql, runs] of /** @type {[string, string, number][]} */ ([
      ['2k', q2k, quick ? 300 : 2000],
      ['100k', q100k, quick ? 20 : 100],
    ])) {
      const g = await timeGuard(guard, sql, runs);
      if (!g.verdict.ok) throw new Error(`benchmark query ${name} was rejected: ${g.verdict.message}`);
      const pre = guard.MAX_PARSE_WORK;
      sizes[name] = {
        bytes: sql.length,
        guard: { p50: g.p50, p99: g.p99, max: g.max, n: g.n },
        wasmParseMs: (await wasmRaw.time(sql, 5)).ms,
        nodeSqlParserParseMs: (await nspRaw.time(sql, name === '2k' ? 5 : 1)).ms,
        workBound: pre,
      };
    }

    const adversarial = [];
    for (const [name, make] of adversarialInputs(limit)) {
      const sql = typeof make === 'function' ? make(guard.MAX_PARSE_WORK, work) : make;
      const g = await timeGuard(guard, sql, quick ? 3 : 7);
      const wasm = await wasmRaw.time(sql);
      const nsp = await nspRaw.time(sql, 1);
      adversarial.push({
        name,
        bytes: sql.length,
        guardMs: g.p50,
        guardMaxMs: g.max,
        verdict: g.verdict.ok ? 'accepted' : g.verdict.code,
        reason: g.verdict.ok ? '' : g.verdict.message.slice(0, 90),
        wasmParseMs: wasm.ms,
        wasmTrap: Boolean(wasm.trap),
        nodeSqlParserParseMs: nsp.ms,
      });
    }

    const rand = mulberry32(20240601);
    const fuzzRuns = quick ? 300 : 3000;
    let fuzzWorst = { ms: 0, sql: '', bytes: 0 };
    let fuzzAccepted = 0;
    let fuzzTried = 0;
    for (let i = 0; i < fuzzRuns; i++) {
      const sql = fuzzInput(rand);
      if (sql.length > limit) continue;
      const t = performance.now();
      const v = await guard.checkSql(sql, SCOPE);
      const ms = performance.now() - t;
      fuzzTried++;
      if (v.ok) fuzzAccepted++;
      if (ms > fuzzWorst.ms) fuzzWorst = { ms, sql: sql.slice(0, 160), bytes: sql.length };
    }

    // Worst case by the median of repeated runs (a single run's max mostly measures the shared machine).
    const worst = adversarial.reduce((a, b) => (b.guardMs > a.guardMs ? b : a));
    const result = {
      parser: '@guanmingchiu/sqlparser-ts (datafusion-sqlparser-rs 0.62, WASM, BigQuery dialect)',
      limits: { maxSqlLength: limit, maxNestingDepth: guard.MAX_NESTING_DEPTH, maxParseWork: guard.MAX_PARSE_WORK },
      wasm: { bytes: wasmBytes.length, gzip: gzipSync(wasmBytes, { level: 9 }).length },
      cold,
      queries: sizes,
      adversarial,
      worst: { name: worst.name, ms: worst.guardMs, maxMs: worst.guardMaxMs },
      fuzz: { runs: fuzzTried, accepted: fuzzAccepted, worstMs: fuzzWorst.ms, worstBytes: fuzzWorst.bytes, worstInput: fuzzWorst.sql },
      targets: TARGETS,
      pass: {
        p50_2k: sizes['2k'].guard.p50 < TARGETS.p50Ms2k,
        p50_100k: sizes['100k'].guard.p50 < TARGETS.p50Ms100k,
        worstAdversarial: worst.guardMs < TARGETS.worstMs && fuzzWorst.ms < TARGETS.worstMs,
      },
    };
    result.rows = [
      [
        `checkSql ${(q2k.length / 1024).toFixed(1)} KiB report query`,
        `p50 ${fmt(sizes['2k'].guard.p50)}`,
        `p99 ${fmt(sizes['2k'].guard.p99)}`,
        `target p50 < ${TARGETS.p50Ms2k} ms`,
      ],
      [
        `checkSql ${(q100k.length / 1024).toFixed(1)} KiB report query`,
        `p50 ${fmt(sizes['100k'].guard.p50)}`,
        `p99 ${fmt(sizes['100k'].guard.p99)}`,
        `target p50 < ${TARGETS.p50Ms100k} ms`,
      ],
      ['bare parse 2 KiB: WASM / node-sql-parser', fmt(sizes['2k'].wasmParseMs), fmt(sizes['2k'].nodeSqlParserParseMs), ''],
      ['bare parse 100 KiB: WASM / node-sql-parser', fmt(sizes['100k'].wasmParseMs), fmt(sizes['100k'].nodeSqlParserParseMs), ''],
      [`worst adversarial input (${adversarial.length}), p50`, fmt(worst.guardMs), worst.name, `target < ${TARGETS.worstMs} ms`],
      [
        `fuzz worst (${fuzzTried} inputs, ${fuzzAccepted} accepted)`,
        fmt(fuzzWorst.ms),
        `${fuzzWorst.bytes} B`,
        `target < ${TARGETS.worstMs} ms`,
      ],
      ['cold: compile / instantiate / first parse', fmt(cold.compileMs), `${fmt(cold.instantiateMs)} / ${fmt(cold.firstParseMs)}`, ''],
      ...adversarial.map((a) => [
        `  ${a.name} (${a.bytes} B)`,
        `guard ${fmt(a.guardMs)} (max ${fmt(a.guardMaxMs)}) ${a.verdict}`,
        `WASM ${a.wasmTrap ? 'TRAP (stack overflow)' : fmt(a.wasmParseMs)} / nsp ${fmt(a.nodeSqlParserParseMs)}`,
        a.reason,
      ]),
    ];
    return result;
  } finally {
    await Promise.all([wasmRaw.close(), nspRaw.close()]);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await run({ quick: process.argv.includes('--quick') });
  const widths = [0, 1, 2, 3].map((i) => Math.max(...result.rows.map((r) => String(r[i] ?? '').length)));
  console.log(result.rows.map((r) => r.map((c, i) => String(c ?? '').padEnd(widths[i])).join('  ')).join('\n'));
  console.log(JSON.stringify({ pass: result.pass, limits: result.limits, wasm: result.wasm, fuzz: result.fuzz }, null, 2));
}
