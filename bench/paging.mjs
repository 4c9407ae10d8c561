#!/usr/bin/env node
// Reading one whole day of orders over MCP, the two ways an assistant can:
//   before: re-run the SQL with ORDER BY ... LIMIT n OFFSET m for every page (a new warehouse job and a new bill
//           each time), in the result form the server sent before result cursors (rows twice: structuredContent and
//           a JSON copy in the text, plus a note), computed from the same rows;
//   after:  one run, then run_query { cursor } for each next page (read from the job's stored result).
// The service runs as `npm run dev` does (dev/run-dev.mjs: wrangler dev + the local warehouse + the demo seed)
// in a temporary state dir on a free port; the warehouse's request journal counts the jobs. Figures: warehouse
// jobs, bytes billed, MCP calls, total result bytes, largest single result (bytes and tokens, estimated as
// characters / 4), p50 time per page. `node bench/paging.mjs`, or `run()` from `npm run bench`.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from '../test/node/free-port.mjs';
import { percentiles, runIfMain } from './stats.mjs';

const ROOT = new URL('..', import.meta.url).pathname;
const TARGET = { jobs: 1, totalBytes: 300 * 1024, largestResultBytes: 60 * 1024, fiveColumnCalls: 4, fiveColumnBytes: 150 * 1024 };
/** The page size the server used before result cursors (MCP_ROW_CAP). */
const OLD_ROW_CAP = 200;

const tokens = (bytes) => Math.round(bytes / 4);
export const size = (value) => Buffer.byteLength(JSON.stringify(value));
/** What a compressing front end (Cloudflare's edge for a client that accepts gzip) would send instead. */
const gzipped = (value) => gzipSync(JSON.stringify(value)).length;

/**
 * Starts `npm run dev` in a fresh state dir; resolves once it answers, with its URL, keys, warehouse URL and the
 * state dir (its local D1 is under `wrangler-state`). bench/discovery.mjs starts it the same way. `readyTimeoutMs`
 * (default 120 s) bounds the whole start, and is given to `npm run dev` as its own --ready-timeout.
 */
export async function startDev({ readyTimeoutMs = 120_000 } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'bench-paging-'));
  const port = await freePort();
  const args = ['--port', String(port), '--state-dir', dir, '--ready-timeout', String(Math.ceil(readyTimeoutMs / 1000))];
  const child = spawn(process.execPath, [join(ROOT, 'dev/run-dev.mjs'), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + readyTimeoutMs;
  while (!/\[dev\] ready in/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm run dev did not start:\n${out.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const creds = JSON.parse(await readFile(join(dir, 'credentials.json'), 'utf8'));
  const vars = await readFile(join(dir, 'dev.vars'), 'utf8');
  const warehouse = /^BIGQUERY_API_BASE=["']?([^"'\n]+)/m.exec(vars)?.[1];
  if (!warehouse) throw new Error('no BIGQUERY_API_BASE in the dev vars file');
  return { url: creds.baseUrl ?? `http://127.0.0.1:${port}`, keys: creds.keys, warehouse, stateDir: dir, stop };
}

export async function connect(url, key) {
  const transport = new StreamableHTTPClientTransport(new URL('/v1/data/mcp', url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'bench-paging', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The day to read: the one with 1,753 orders in acme.fact__orders if the data has it, else the busiest day. */
async function pickDay(client) {
  const r = await client.callTool({
    name: 'run_query',
    arguments: {
      sql: 'SELECT CAST(order_date AS STRING) AS day, COUNT(*) AS n FROM `service-v1.acme.fact__orders` GROUP BY order_date ORDER BY (COUNT(*) = 1753) DESC, n DESC, day LIMIT 1',
    },
  });
  const row = check(r).rows?.[0];
  if (!row) throw new Error(`could not pick a day: ${JSON.stringify(r.content)}`);
  return { day: row[0], rows: Number(row[1]) };
}

async function jobsFor(warehouse, marker) {
  const res = await fetch(`${warehouse}/__requests?${new URLSearchParams({ op: 'query', sql: marker, limit: '500' })}`);
  return (await res.json()).requests.length;
}

/** run_query's result as the model reads it: one text block of compact JSON, rows as arrays under `schema`. */
function check(result) {
  if (result.isError) throw new Error(`run_query failed: ${result.content?.[0]?.text}`);
  return JSON.parse(result.content[0].text);
}

/**
 * Bytes the model reads, per client convention (docs/mcp.md, Results): claude.ai the text; Claude Code
 * JSON.stringify(structuredContent) when the result has it, else the text; ChatGPT both.
 */
export function modelBytes(result) {
  const text = result.content.reduce((n, c) => n + (c.type === 'text' ? Buffer.byteLength(c.text) : 0), 0);
  const structured = result.structuredContent === undefined ? 0 : size(result.structuredContent);
  return { text, claudeCode: structured > 0 ? structured : text, chatgpt: text + structured };
}

/** The note the server appended before result cursors (src/features/query/query.tools.ts then). */
const OLD_NOTE = (n) =>
  `Only the first ${n} rows are returned (assistant result cap). Results are capped for assistants; when \`truncated\` is true, fetch the rest by re-running the SQL with ` +
  `ORDER BY on a unique key plus LIMIT n OFFSET m, or aggregate in SQL instead of pulling raw rows. Next page: add ORDER BY <unique column> LIMIT ${n} OFFSET ${n} to the same SQL.`;

/** The result as the server sent it before result cursors: structuredContent, its JSON copy as text, and the note. */
function oldForm(data, note) {
  const { usage: _usage, note: _note, totalRows: _t, nextCursor: _c, window: _w, ...old } = data;
  const structured = { ...old, truncated: old.truncated, ...(note ? { note } : {}) };
  return {
    structuredContent: structured,
    content: [{ type: 'text', text: JSON.stringify(structured) }, ...(note ? [{ type: 'text', text: note }] : [])],
  };
}

async function walkBefore(client, warehouse, day) {
  const marker = `before_${Date.now()}`;
  const base = `SELECT * FROM \`service-v1.acme.fact__orders\` WHERE order_date = DATE '${day}' /* ${marker} */ ORDER BY order_id`;
  const sizes = [];
  const zipped = [];
  const times = [];
  let billed = 0;
  let rows = 0;
  for (let offset = 0; ;) {
    const t = performance.now();
    // One row more than a page, so the old server's `truncated` can be told from this server's totalRows.
    const data = check(
      await client.callTool({ name: 'run_query', arguments: { sql: `${base} LIMIT ${OLD_ROW_CAP + 1} OFFSET ${offset}` } }),
    );
    times.push(performance.now() - t);
    billed += data.stats.totalBytesBilled;
    const names = data.schema.map((f) => f.name);
    // The old form carried keyed row objects.
    const page = data.rows.slice(0, OLD_ROW_CAP).map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])));
    const more = data.totalRows > page.length;
    const { schema: _schema, ...rest } = data;
    const shown = { ...rest, schema: data.schema, rows: page, rowCount: page.length, truncated: more };
    const old = oldForm(shown, more ? OLD_NOTE(page.length) : undefined);
    sizes.push(size(old));
    zipped.push(gzipped(old));
    rows += page.length;
    offset += page.length;
    if (!more) break;
  }
  return { calls: sizes.length, jobs: await jobsFor(warehouse, marker), billed, rows, sizes, zipped, times };
}

async function walkAfter(client, warehouse, day, columns = '*') {
  const marker = `after_${Date.now()}`;
  const sql = `SELECT ${columns} FROM \`service-v1.acme.fact__orders\` WHERE order_date = DATE '${day}' /* ${marker} */`;
  const sizes = [];
  const zipped = [];
  const parts = { structured: 0, text: 0, claudeCode: 0, chatgpt: 0 };
  const times = [];
  let billed = 0;
  let rows = 0;
  /** @type {{ sql: string } | { cursor: string }} */
  let args = { sql };
  for (;;) {
    const t = performance.now();
    const result = await client.callTool({ name: 'run_query', arguments: args });
    times.push(performance.now() - t);
    const data = check(result);
    sizes.push(size(result));
    zipped.push(gzipped(result));
    parts.structured += result.structuredContent === undefined ? 0 : size(result.structuredContent);
    const read = modelBytes(result);
    parts.text += read.text;
    parts.claudeCode += read.claudeCode;
    parts.chatgpt += read.chatgpt;
    billed += data.stats.totalBytesBilled;
    rows += data.rowCount;
    if (!data.nextCursor) break;
    args = { cursor: data.nextCursor };
  }
  return { calls: sizes.length, jobs: await jobsFor(warehouse, marker), billed, rows, sizes, zipped, times, parts };
}

function summary(w) {
  const total = w.sizes.reduce((a, b) => a + b, 0);
  const largest = Math.max(...w.sizes);
  return {
    rows: w.rows,
    warehouseJobs: w.jobs,
    bytesBilled: w.billed,
    mcpCalls: w.calls,
    totalResultBytes: total,
    largestResultBytes: largest,
    largestResultTokens: tokens(largest),
    pageP50Ms: percentiles(w.times).p50,
    totalGzipBytes: w.zipped.reduce((a, b) => a + b, 0),
    ...(w.parts
      ? { structuredBytes: w.parts.structured, textBytes: w.parts.text, claudeCodeBytes: w.parts.claudeCode, chatgptBytes: w.parts.chatgpt }
      : {}),
  };
}

/** Demo queries measured in both forms: the old (rows twice, as JSON) computed from the same rows, and the new as sent. */
const DEMO_QUERIES = [
  ['table list', { sql: 'SELECT table_name, layer, data_source, description FROM `service-v1.acme.table_metadata`' }],
  [
    'revenue by channel',
    {
      sql: 'SELECT channel, SUM(revenue) AS revenue, COUNT(*) AS orders FROM `service-v1.acme.fact__orders` GROUP BY channel ORDER BY channel',
    },
  ],
  ['report section (MONTHLY)', { queryId: 'rq_overview_channels', period: { cadence: 'MONTHLY' } }],
  [
    'daily revenue, 400 days (capped)',
    { sql: 'SELECT day, channel, orders, revenue FROM `service-v1.acme.agg__daily_revenue` ORDER BY day, channel' },
  ],
  ['SELECT * orders (capped)', { sql: 'SELECT * FROM `service-v1.acme.fact__orders`' }],
];

async function demoForms(client) {
  const out = [];
  for (const [name, args] of DEMO_QUERIES) {
    const result = await client.callTool({ name: 'run_query', arguments: args });
    const data = check(result);
    const names = data.schema.map((f) => f.name);
    const keyed = { ...data, rows: data.rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]]))) };
    const old = oldForm(keyed, data.truncated ? OLD_NOTE(data.rowCount) : undefined);
    out.push({
      name,
      rows: data.rowCount,
      oldBytes: size(old),
      oldTokens: tokens(size(old)),
      newBytes: size(result),
      newTokens: tokens(size(result)),
    });
  }
  return out;
}

export async function run() {
  const dev = await startDev();
  try {
    const client = await connect(dev.url, dev.keys.brand);
    try {
      const { day, rows } = await pickDay(client);
      const before = summary(await walkBefore(client, dev.warehouse, day));
      const after = summary(await walkAfter(client, dev.warehouse, day));
      const threeColumns = summary(await walkAfter(client, dev.warehouse, day, 'order_id, order_date, channel'));
      const fiveColumns = summary(await walkAfter(client, dev.warehouse, day, 'order_id, order_date, customer_id, channel, revenue'));
      const demo = await demoForms(client);
      const met =
        after.warehouseJobs <= TARGET.jobs &&
        after.totalResultBytes <= TARGET.totalBytes &&
        after.largestResultBytes <= TARGET.largestResultBytes &&
        fiveColumns.mcpCalls <= TARGET.fiveColumnCalls &&
        fiveColumns.totalResultBytes <= TARGET.fiveColumnBytes;
      const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
      const line = (label, s) => [
        `paging ${label}`,
        `${s.mcpCalls} calls, ${s.warehouseJobs} jobs, ${s.bytesBilled} B billed`,
        `total ${kb(s.totalResultBytes)} (gzip ${kb(s.totalGzipBytes)}), largest ${kb(s.largestResultBytes)} (~${s.largestResultTokens} tokens)`,
        `p50 ${s.pageP50Ms.toFixed(1)} ms/page`,
      ];
      return {
        day,
        dayRows: rows,
        before,
        after,
        threeColumns,
        fiveColumns,
        target: TARGET,
        targetMet: met,
        tokenEstimate: 'characters / 4',
        demo,
        rows: [
          line('before (LIMIT/OFFSET re-runs, old form)', before),
          line('after (cursor)', after),
          line('after, 3 columns', threeColumns),
          line('after, 5 columns', fiveColumns),
          ...demo.map((d) => [
            `paging demo: ${d.name}`,
            `${d.rows} rows`,
            `old ${d.oldBytes} B (~${d.oldTokens} tokens)`,
            `new ${d.newBytes} B (~${d.newTokens} tokens)`,
          ]),
        ],
      };
    } finally {
      await client.close();
    }
  } finally {
    await dev.stop();
  }
}

await runIfMain(import.meta.url, run);
