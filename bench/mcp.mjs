// MCP against its REST twins in the same run: `tools/call list_brands` vs GET /v1/data/brands and
// `tools/call run_query` vs POST /v1/data/query (same SQL), sequential, p50/p99 each, in both protocol eras; and
// the bytes an assistant reads before its first call (instructions plus tools/list). Called by bench/run.mjs with
// the stack it started.
import { timeSequential } from './stats.mjs';

export const SQL = 'SELECT day, channel, revenue FROM `service-v1.globex.agg__daily_revenue` ORDER BY day DESC, channel LIMIT 10';
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';

function mcpBody(era, method, params = {}) {
  const _meta =
    era === MODERN
      ? {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        }
      : undefined;
  return { jsonrpc: '2.0', id: 1, method, params: { ...params, ...(_meta ? { _meta } : {}) } };
}

export async function mcp(url, key, era, method, params) {
  const headers = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': era,
    ...(era === MODERN ? { 'mcp-method': method, ...(params?.name ? { 'mcp-name': params.name } : {}) } : {}),
  };
  const res = await fetch(new URL('/v1/data/mcp', url), { method: 'POST', headers, body: JSON.stringify(mcpBody(era, method, params)) });
  const text = await res.text();
  if (!res.ok || text.includes('"isError":true') || text.includes('"error":{'))
    throw new Error(`mcp ${method} answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

export async function rest(url, key, path, body) {
  const res = await fetch(new URL(path, url), {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return res.text();
}

/** Warm-up, then n sequential runs. */
async function time(n, fn) {
  for (let i = 0; i < 10; i++) await fn();
  return timeSequential(n, fn);
}

export async function run({ quick = false, url, keys }) {
  const n = quick ? 60 : 300;
  const key = keys.org;
  const pairs = {
    list_brands: {
      rest: () => rest(url, key, '/v1/data/brands'),
      mcp: (era) => mcp(url, key, era, 'tools/call', { name: 'list_brands', arguments: {} }),
    },
    run_query: {
      rest: () => rest(url, key, '/v1/data/query', { sql: SQL, brandId: 'brand_globex' }),
      mcp: (era) => mcp(url, key, era, 'tools/call', { name: 'run_query', arguments: { sql: SQL, brandId: 'brand_globex' } }),
    },
  };
  const out = { runs: n, target: 'MCP p50 <= 1.1x REST p50', latency: {}, firstRead: {} };
  const rows = [];
  for (const [tool, pair] of Object.entries(pairs)) {
    // Interleaved order per tool so a warm-up drift does not favour one side.
    const restStats = await time(n, pair.rest);
    const modern = await time(n, () => pair.mcp(MODERN));
    const legacy = await time(n, () => pair.mcp(LEGACY));
    out.latency[tool] = {
      rest: restStats,
      modern,
      legacy,
      modernRatioP50: modern.p50 / restStats.p50,
      legacyRatioP50: legacy.p50 / restStats.p50,
    };
    rows.push([`REST twin of ${tool}`, `p50 ${restStats.p50.toFixed(2)} ms`, `p99 ${restStats.p99.toFixed(2)} ms`, '1.00']);
    rows.push([
      `MCP ${tool} (${MODERN})`,
      `p50 ${modern.p50.toFixed(2)} ms`,
      `p99 ${modern.p99.toFixed(2)} ms`,
      `${(modern.p50 / restStats.p50).toFixed(2)}x REST p50`,
    ]);
    rows.push([
      `MCP ${tool} (${LEGACY})`,
      `p50 ${legacy.p50.toFixed(2)} ms`,
      `p99 ${legacy.p99.toFixed(2)} ms`,
      `${(legacy.p50 / restStats.p50).toFixed(2)}x REST p50`,
    ]);
  }
  // The bytes an assistant reads first: the server instructions (initialize) and the tools/list result.
  const init = JSON.parse(
    await mcp(url, key, LEGACY, 'initialize', { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'bench', version: '0' } }),
  );
  const list = JSON.parse(await mcp(url, key, LEGACY, 'tools/list'));
  const bytes = (v) => Buffer.byteLength(typeof v === 'string' ? v : JSON.stringify(v));
  out.firstRead = {
    instructionsBytes: bytes(init.result.instructions),
    toolsListBytes: bytes(list.result.tools),
    tools: list.result.tools.length,
  };
  out.firstRead.totalBytes = out.firstRead.instructionsBytes + out.firstRead.toolsListBytes;
  rows.push([
    'MCP instructions + tools/list',
    `${out.firstRead.totalBytes} bytes`,
    `${out.firstRead.tools} tools`,
    'target 10 KB (first 7), 14 KB (all)',
  ]);
  out.rows = rows;
  console.log(rows.map((r) => r.join('  ')).join('\n'));
  return out;
}
