// End to end: `npm run dev` (local warehouse, local D1 with the demo seed, `wrangler dev`; the run's shared instance,
// ./mcp-dev-instance.mjs), then the MCP SDK's own Client over real HTTP, walking the spec's flows A, B and C with
// keys of the demo keys' scopes made for this file, plus the HTTP-level answers (401 challenge, 405 for GET).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devFetch, READY_TIMEOUT_MS, sharedDevInstance } from './mcp-dev-instance.mjs';

let dev;
let baseUrl;
let keys;
const clients = {};

/** The v2 SDK client pinned to 2026-07-28 (no initialize): the era a current assistant speaks. */
async function connect(key) {
  const client = new Client({ name: 'mcp-dev-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/v1/data/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: devFetch,
    }),
  );
  return client;
}

function ok(result) {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  // Tools with structured results send it once as structuredContent, with a compact text rendering beside it (never
  // a JSON copy); run_query and show_report send their data once, as text only, with rows as arrays in schema order
  // (docs/mcp.md): read those rows back as objects.
  if (result.structuredContent !== undefined) {
    expect(result.content[0].text).not.toBe(JSON.stringify(result.structuredContent));
    return result.structuredContent;
  }
  const text = JSON.parse(result.content[0].text);
  if (Array.isArray(text.rows) && Array.isArray(text.schema)) {
    const names = text.schema.map((f) => f.name);
    text.rows = text.rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i] ?? null])));
  }
  return text;
}

function toolError(result) {
  expect(result.isError).toBe(true);
  const body = JSON.parse(result.content[0].text);
  expect(body.error.requestId).toMatch(/^req_/);
  return body.error;
}

const call = (who, name, args = {}) => clients[who].callTool({ name, arguments: args });

beforeAll(async () => {
  dev = await sharedDevInstance();
  baseUrl = dev.baseUrl;
  keys = dev.keys;
  for (const who of ['org', 'brand', 'other']) clients[who] = await connect(keys[who]);
}, READY_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await Promise.all(Object.values(clients).map((c) => c.close().catch(() => undefined)));
}, 60_000);

describe('MCP against npm run dev', () => {
  it('offers the demo brand key its tools (no save_memory: the key cannot write memories)', async () => {
    const { tools } = await clients.brand.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'describe_table',
      'fetch',
      'get_data_issue',
      'get_report',
      'list_brands',
      'list_memories',
      'list_report_queries',
      'list_reports',
      'list_saved_queries',
      'report_data_issue',
      'run_query',
      'search',
      'show_report',
    ]);
  });

  it('returns the same brands as REST for each demo key', async () => {
    for (const who of ['org', 'brand', 'other']) {
      const mcp = ok(await call(who, 'list_brands'));
      const res = await fetch(`${baseUrl}/v1/data/brands`, { headers: { authorization: `Bearer ${keys[who]}` } });
      expect(res.status).toBe(200);
      expect(mcp).toEqual(await res.json());
    }
  });

  it('flow A: discovers tables and columns, then queries a mart', async () => {
    const { brands } = ok(await call('org', 'list_brands'));
    const dataset = brands.find((b) => b.brandId === 'brand_acme').dataset;
    const catalog = ok(
      await call('org', 'run_query', {
        brandId: 'brand_acme',
        sql: `SELECT table_name, layer FROM \`service-v1.${dataset}.table_metadata\``,
      }),
    );
    expect(catalog.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(['fact__orders', 'agg__daily_revenue']));
    const columns = ok(
      await call('org', 'run_query', {
        brandId: 'brand_acme',
        sql: `SELECT column_name, data_type FROM \`service-v1.${dataset}.INFORMATION_SCHEMA.COLUMNS\` WHERE table_name = 'fact__orders'`,
      }),
    );
    expect(columns.rows.map((r) => r.column_name)).toEqual(expect.arrayContaining(['order_id', 'revenue', 'channel']));
    const byChannel = ok(
      await call('brand', 'run_query', {
        sql: `SELECT channel, SUM(revenue) AS revenue FROM \`service-v1.${dataset}.fact__orders\` GROUP BY channel ORDER BY channel`,
      }),
    );
    expect(byChannel).toMatchObject({ brandId: 'brand_acme', truncated: false, rowCount: 3 });
    expect(byChannel.rows.map((r) => r.channel)).toEqual(['marketplace', 'store', 'web']);
  });

  it('caps raw rows for assistants and says how to page', async () => {
    const result = await call('brand', 'run_query', {
      sql: 'SELECT order_id, revenue FROM `service-v1.acme.fact__orders` ORDER BY order_id',
    });
    const data = ok(result);
    expect(data.truncated).toBe(true);
    expect(data.rowCount).toBe(data.rows.length);
    expect(data.rowCount).toBeGreaterThan(0);
    // Pages fill the byte budget, up to MCP_ROW_CAP rows; the cursor is given once.
    expect(data.rowCount).toBeLessThanOrEqual(2000);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(61_440);
    expect(data.nextCursor).toEqual(expect.any(String));
    const next = ok(
      await call('brand', 'run_query', {
        sql: `SELECT order_id, revenue FROM \`service-v1.acme.fact__orders\` ORDER BY order_id LIMIT 5 OFFSET ${data.rowCount}`,
      }),
    );
    expect(next.rows[0].order_id > data.rows[data.rows.length - 1].order_id).toBe(true);
  });

  it('flow B: report section and saved query run by id', async () => {
    const { reports } = ok(await call('brand', 'list_reports', { type: 'system' }));
    const overview = reports.find((r) => r.reportId === 'rpt_business_overview');
    expect(overview).toBeDefined();
    const { queries } = ok(await call('brand', 'list_report_queries', { reportId: overview.reportId }));
    const section = queries[0];
    expect(section.parameterized).toBe(true);
    const run = ok(await call('brand', 'run_query', { queryId: section.id, period: { cadence: 'MONTHLY' } }));
    expect(run).toMatchObject({ brandId: 'brand_acme', truncated: false });
    expect(run.rowCount).toBeGreaterThan(0);

    const saved = ok(await call('org', 'list_saved_queries', { brandId: 'brand_globex' }));
    const first = saved.queries[0];
    const savedRun = ok(await call('org', 'run_query', { queryId: first.id }));
    expect(savedRun.brandId).toBe('brand_globex');
    expect(savedRun.rowCount).toBeGreaterThan(0);
  });

  it('dry run estimates bytes without rows', async () => {
    const data = ok(await call('brand', 'run_query', { sql: 'SELECT revenue FROM `service-v1.acme.fact__orders`', dryRun: true }));
    expect(data).toMatchObject({ rowCount: 0, rows: [], stats: { dryRun: true, totalBytesBilled: 0 } });
    expect(data.stats.totalBytesProcessed).toBeGreaterThan(0);
  });

  it('refuses what the key may not run, as tool errors', async () => {
    expect(toolError(await call('brand', 'run_query', { sql: 'SELECT * FROM `service-v1.umbrella.fact__orders`' })).code).toBe(
      'FORBIDDEN_TABLE',
    );
    expect(toolError(await call('brand', 'run_query', { sql: 'DELETE FROM `service-v1.acme.fact__orders` WHERE TRUE' })).code).toBe(
      'INVALID_SQL',
    );
    expect(toolError(await call('other', 'run_query', { brandId: 'brand_acme', sql: 'SELECT 1' })).code).toBe('FORBIDDEN_BRAND');
    expect(toolError(await call('org', 'run_query', { sql: 'SELECT 1' })).code).toBe('VALIDATION');
  });

  it('flow C: files a data issue', async () => {
    const data = ok(await call('brand', 'report_data_issue', { summary: 'Marketplace revenue looks low', severity: 'low' }));
    expect(data.feedbackRef).toMatch(/^fb_/);
  });

  it('a 2025-era client (the v1 SDK, initialize) sees the same tools and data', async () => {
    const legacy = new ClientV1({ name: 'mcp-dev-e2e-v1', version: '1.0.0' });
    await legacy.connect(
      new TransportV1(new URL(`${baseUrl}/v1/data/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${keys.brand}` } },
        fetch: devFetch,
      }),
    );
    const { tools } = await legacy.listTools();
    // Only the 2025-11-25 vocabulary differs: run_query's `execution.taskSupport` (experimental tasks, docs/mcp.md).
    expect(tools.filter((t) => t.execution !== undefined).map((t) => t.name)).toEqual(['run_query']);
    expect(tools.map(({ execution: _flag, ...tool }) => tool)).toEqual((await clients.brand.listTools()).tools);
    expect(ok(await legacy.callTool({ name: 'list_brands', arguments: {} }))).toEqual(ok(await call('brand', 'list_brands')));
    await legacy.close();
  });

  it('answers 401 with the OAuth discovery challenge, and 405 to GET', async () => {
    const unauth = await devFetch(`${baseUrl}/v1/data/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toMatch(/resource_metadata="[^"]*\/\.well-known\/oauth-protected-resource/);
    const body = await unauth.json();
    expect(body.error.code).toBe('UNAUTHORIZED');
    expect(unauth.headers.get('x-request-id')).toBe(body.error.requestId);

    const get = await fetch(`${baseUrl}/v1/data/mcp`, { headers: { authorization: `Bearer ${keys.brand}`, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});
