import { env } from 'cloudflare:test';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/auth/api-keys';
import { connectMcp, errorOf, okData, texts } from './mcp-client';
import { postJson, seedDemo, TEST_KEYS, type TestKey } from './seed';

const clients = {} as Record<TestKey, Client>;
let limitedKey = '';

beforeAll(async () => {
  await seedDemo();
  for (const k of ['org', 'brand', 'other'] as const) clients[k] = await connectMcp(TEST_KEYS[k]);
  // A brand key allowed a single run per rolling 24 h, to see the usage limit over MCP.
  const key = await generateApiKey();
  limitedKey = key.secret;
  await env.DB.prepare(
    'INSERT INTO api_keys (id, name, prefix, secret_hash, brand_id, daily_query_limit, created_at) VALUES (?, ?, ?, ?, ?, 1, 0)',
  )
    .bind(key.id, 'one run a day', key.prefix, key.secretHash, 'brand_acme')
    .run();
});

afterAll(async () => {
  await Promise.all(Object.values(clients).map((c) => c.close()));
});

function run(key: TestKey, args: Record<string, unknown>) {
  return clients[key].callTool({ name: 'run_query', arguments: args });
}

interface RunData {
  brandId: string;
  rows: Record<string, unknown>[];
  rowCount: number;
  truncated: boolean;
  note?: string;
  stats?: { dryRun: boolean; totalBytesBilled: number; totalBytesProcessed: number };
}

async function runOk(key: TestKey, args: Record<string, unknown>): Promise<RunData> {
  return okData(await run(key, args)) as unknown as RunData;
}

const ORDERS = '`service-v1.acme.fact__orders`';

describe('run_query, raw SQL (flow A)', () => {
  it('returns the same rows as REST for the same SQL and key', async () => {
    const sql = 'SELECT table_name, layer FROM `service-v1.acme.table_metadata` ORDER BY table_name';
    const mcp = await runOk('brand', { sql });
    const rest = await postJson('/v1/data/query', 'brand', { sql });
    expect(rest.status).toBe(200);
    const body = rest.body as RunData;
    expect(mcp.rows).toEqual(body.rows);
    expect(mcp).toMatchObject({ brandId: 'brand_acme', truncated: false, rowCount: body.rowCount });
    expect(mcp.note).toBeUndefined();
    expect(mcp.rows.map((r) => r.table_name)).toContain('fact__orders');
  });

  it('org key names the brand; columns come from INFORMATION_SCHEMA.COLUMNS', async () => {
    const data = await runOk('org', {
      brandId: 'brand_globex',
      sql: "SELECT column_name, data_type FROM `service-v1.globex.INFORMATION_SCHEMA.COLUMNS` WHERE table_name = 'dim__products'",
    });
    expect(data.brandId).toBe('brand_globex');
    expect(data.rows.map((r) => r.column_name).sort()).toEqual(['category', 'name', 'product_id', 'unit_price']);
  });

  it(`caps rows at MCP_ROW_CAP (${env.MCP_ROW_CAP}), sets truncated and tells the model how to page`, async () => {
    const sql = `SELECT order_id FROM ${ORDERS} ORDER BY order_id`;
    const result = await run('brand', { sql });
    const data = okData(result) as unknown as RunData;
    expect(data.truncated).toBe(true);
    expect(data.rowCount).toBe(Number(env.MCP_ROW_CAP));
    expect(data.rows).toHaveLength(data.rowCount);
    expect(data.note).toMatch(/LIMIT .* OFFSET/);
    // The note is also a text block of its own, next to the JSON copy.
    expect(texts(result)).toEqual([expect.any(String), data.note]);

    // REST with the same key and SQL is not capped at the MCP size.
    const rest = await postJson('/v1/data/query', 'brand', { sql });
    expect((rest.body as RunData).rowCount).toBeGreaterThan(data.rowCount);
    expect((rest.body as RunData).rows.slice(0, data.rowCount)).toEqual(data.rows);

    // The page the note describes continues where this one stopped.
    const next = await runOk('brand', { sql: `${sql} LIMIT 3 OFFSET ${data.rowCount}` });
    expect(next.rows).toEqual((rest.body as RunData).rows.slice(data.rowCount, data.rowCount + 3));
  });

  it(`caps result JSON at MCP_MAX_RESULT_BYTES (${env.MCP_MAX_RESULT_BYTES})`, async () => {
    // 150 rows (under the row cap) of ~2 KB each: only the byte cap can cut this.
    const data = await runOk('brand', { sql: `SELECT order_id, REPEAT('x', 2000) AS pad FROM ${ORDERS} ORDER BY order_id LIMIT 150` });
    expect(data.truncated).toBe(true);
    expect(data.rowCount).toBeGreaterThan(0);
    expect(data.rowCount).toBeLessThan(150);
    expect(new TextEncoder().encode(JSON.stringify(data.rows)).length).toBeLessThanOrEqual(Number(env.MCP_MAX_RESULT_BYTES));
    expect(data.note).toBeTruthy();
  });

  it('dry run: validates and estimates bytes without rows or billing', async () => {
    const data = await runOk('brand', { sql: `SELECT revenue FROM ${ORDERS}`, dryRun: true });
    expect(data).toMatchObject({ rows: [], rowCount: 0, truncated: false, stats: { dryRun: true, totalBytesBilled: 0 } });
    expect(data.stats?.totalBytesProcessed).toBeGreaterThan(0);
  });

  it('logs the run with transport mcp and the MCP request id', async () => {
    const sql = `SELECT COUNT(*) AS n FROM ${ORDERS} WHERE channel = 'web'`;
    await runOk('brand', { sql });
    const row = await env.DB.prepare('SELECT transport, outcome, brand_id, request_id FROM query_log WHERE sql = ? ORDER BY created_at DESC')
      .bind(sql)
      .first();
    expect(row).toMatchObject({ transport: 'mcp', outcome: 'OK', brand_id: 'brand_acme', request_id: expect.stringMatching(/^req_/) });
  });
});

describe('run_query, stored queries (flow B)', () => {
  it('runs a report section with an explicit period, same rows as REST', async () => {
    const args = { queryId: 'rq_overview_channels', period: { cadence: 'MONTHLY' } };
    const mcp = await runOk('brand', args);
    const rest = await postJson('/v1/data/query', 'brand', args);
    expect(rest.status).toBe(200);
    expect(mcp.rows).toEqual((rest.body as RunData).rows);
    expect(mcp.rowCount).toBeGreaterThan(0);
  });

  it('runs a saved query by id, inferring its brand for an org key', async () => {
    const data = await runOk('org', { queryId: 'sq_globex_monthly_kpis' });
    expect(data.brandId).toBe('brand_globex');
    expect(data.rowCount).toBeGreaterThan(0);
  });
});

describe('run_query errors are tool results carrying the REST error', () => {
  it.each([
    ['both sql and queryId', 'brand', { sql: 'SELECT 1', queryId: 'rq_overview_channels' }, 'VALIDATION'],
    ['neither sql nor queryId', 'brand', { dryRun: true }, 'VALIDATION'],
    ['period with raw sql', 'brand', { sql: 'SELECT 1', period: { cadence: 'DAILY' } }, 'VALIDATION'],
    ['org key without brandId', 'org', { sql: 'SELECT 1' }, 'VALIDATION'],
    ['a brand outside the key', 'other', { brandId: 'brand_acme', sql: 'SELECT 1' }, 'FORBIDDEN_BRAND'],
    ['another tenant\'s table', 'brand', { sql: 'SELECT * FROM `service-v1.umbrella.fact__orders`' }, 'FORBIDDEN_TABLE'],
    ['a write', 'brand', { sql: `DELETE FROM ${ORDERS} WHERE TRUE` }, 'INVALID_SQL'],
    ['two statements', 'brand', { sql: 'SELECT 1; SELECT 2' }, 'INVALID_SQL'],
    ['an unknown query id', 'brand', { queryId: 'rq_does_not_exist' }, 'QUERY_NOT_FOUND'],
    ['another tenant\'s saved query', 'brand', { queryId: 'sq_umbrella_monthly_kpis' }, 'QUERY_NOT_FOUND'],
    ['a brand without a dataset', 'org', { brandId: 'brand_initech', sql: 'SELECT 1' }, 'BRAND_NOT_PROVISIONED'],
  ] as const)('%s: isError %s', async (_case, key, args, code) => {
    const error = errorOf(await run(key, args));
    expect(error.code).toBe(code);
  });

  it('a query the warehouse rejects: QUERY_FAILED', async () => {
    const error = errorOf(await run('brand', { sql: `SELECT no_such_column FROM ${ORDERS}` }));
    expect(error.code).toBe('QUERY_FAILED');
  });

  it('the daily usage limit: USAGE_LIMIT_EXCEEDED on the run past it', async () => {
    const client = await connectMcp(limitedKey);
    const first = await client.callTool({ name: 'run_query', arguments: { sql: 'SELECT 1 AS one' } });
    expect(first.isError ?? false).toBe(false);
    const error = errorOf(await client.callTool({ name: 'run_query', arguments: { sql: 'SELECT 1 AS one' } }));
    expect(error.code).toBe('USAGE_LIMIT_EXCEEDED');
    await client.close();
  });
});
