import { env } from 'cloudflare:test';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/auth/api-keys';
import { z } from 'zod';
import { connectMcp, errorOf, texts } from './mcp-client';
import { addBrandKey, postJson, seedDemo, TEST_KEYS, type TestKey, usedBytes } from './seed';
import { RunResultSchema } from './run-query-fixtures';

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

const RunDataSchema = RunResultSchema.extend({
  note: z.string().optional(),
  usage: z.strictObject({
    runsLimit: z.number(),
    runsRemaining: z.number(),
    bytesLimit: z.number(),
    bytesRemaining: z.number(),
    resetSeconds: z.number(),
    maxBytesBilled: z.number(),
    maxRunningJobs: z.number(),
    jobTimeoutMs: z.number(),
  }),
});
type RunData = z.infer<typeof RunDataSchema>;

const RESULT_CAP = Number(env.MCP_MAX_RESULT_BYTES);

/** The compact result the text block holds: the REST facts, `schema`, and rows as arrays in schema order. */
const CompactSchema = RunDataSchema.omit({ rows: true }).extend({
  firstRow: z.number().int().positive(),
  schema: z.array(z.object({ name: z.string(), type: z.string().optional() })),
  rows: z.array(z.array(z.unknown())),
});

/**
 * A successful run_query result: one text block holding the compact JSON (no structuredContent, so every client's
 * model reads the rows once), rows as arrays under `schema`, the cursor once, the whole answer within the byte
 * cap. Returns the data with rows expanded back to objects, for comparison with REST.
 */
function parseRun(raw: unknown) {
  const t = texts(raw);
  const result = z.object({ isError: z.boolean().optional(), structuredContent: z.unknown().optional() }).parse(raw);
  expect(result.isError ?? false, t[0]).toBe(false);
  expect(result.structuredContent).toBeUndefined();
  expect(t).toHaveLength(1);
  const text = t[0] ?? '';
  const compact = CompactSchema.parse(JSON.parse(text));
  const bytes = new TextEncoder().encode(JSON.stringify(raw)).length;
  expect(bytes).toBeLessThanOrEqual(RESULT_CAP);
  expect(compact.rows).toHaveLength(compact.rowCount);
  const columns = compact.schema.map((f) => f.name);
  for (const row of compact.rows) expect(row).toHaveLength(columns.length);
  // The cursor once in the whole answer (the note names it, it does not repeat it).
  if (compact.nextCursor !== null) expect(JSON.stringify(raw).split(compact.nextCursor)).toHaveLength(2);
  const rows = compact.rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])));
  const { schema: _schema, ...facts } = compact;
  const data = RunDataSchema.extend({ firstRow: z.number().int() }).parse({
    ...facts,
    rows,
    ...(compact.schema.length > 0 ? { schema: compact.schema } : {}),
  });
  return { data, compact, text, bytes };
}

async function runOk(key: TestKey, args: Record<string, unknown>): Promise<RunData> {
  return parseRun(await run(key, args)).data;
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

  it(`fills a page to the byte budget (${env.MCP_MAX_RESULT_BYTES} bytes), far past 200 rows, states the caps as numbers and names the cursor`, async () => {
    const sql = `SELECT order_id, order_date, channel, customer_id FROM ${ORDERS} ORDER BY order_id`;
    const { data, bytes } = parseRun(await run('brand', { sql }));
    expect(data.truncated).toBe(true);
    expect(data.rowCount).toBeGreaterThan(500);
    expect(data.rowCount).toBeLessThan(Number(env.MCP_ROW_CAP));
    // Filled: what is left unused is less than the room kept for the envelope plus one more row.
    expect(bytes).toBeGreaterThan(RESULT_CAP - 2048 - 64);
    expect(data.totalRows).toBe(500_000);
    expect(data.firstRow).toBe(1);
    expect(data.nextCursor).toEqual(expect.any(String));
    expect(data.note).toContain(`at most ${env.MCP_ROW_CAP} rows and ${env.MCP_MAX_RESULT_BYTES} bytes`);
    expect(data.note).toContain(`Rows 1-${data.rowCount} of 500000`);
    expect(data.note).toContain('{"cursor": <nextCursor>}');

    // REST with the same key and SQL is not capped at the MCP size, and holds the same rows first.
    const rest = await postJson('/v1/data/query', 'brand', { sql });
    expect((rest.body as RunData).rowCount).toBeGreaterThan(data.rowCount);
    expect((rest.body as RunData).rows.slice(0, data.rowCount)).toEqual(data.rows);
  }, 30_000);

  it(`stops at the row ceiling MCP_ROW_CAP (${env.MCP_ROW_CAP}) when rows are tiny, and at maxRows when asked`, async () => {
    const sql = `SELECT 1 AS x FROM ${ORDERS} LIMIT ${Number(env.MCP_ROW_CAP) + 100}`;
    const { data, bytes } = parseRun(await run('brand', { sql }));
    expect(data.rowCount).toBe(Number(env.MCP_ROW_CAP));
    expect(bytes).toBeLessThan(RESULT_CAP / 2);
    expect(data.note).toContain(`at most ${env.MCP_ROW_CAP} rows`);
    const small = parseRun(await run('brand', { sql, maxRows: 25 })).data;
    expect(small.rowCount).toBe(25);
    expect(parseRun(await run('brand', { cursor: small.nextCursor, maxRows: 10 })).data).toMatchObject({ rowCount: 10, firstRow: 26 });
    expect(errorOf(await run('brand', { sql, maxRows: Number(env.MCP_ROW_CAP) + 1 })).message).toMatch(/maxRows is at most/);
  }, 30_000);

  it(`caps the whole result at MCP_MAX_RESULT_BYTES (${env.MCP_MAX_RESULT_BYTES}) whatever the rows hold`, async () => {
    // 150 rows of ~2 KB each, with characters that need escaping: only the byte cap can cut this.
    const { data, bytes } = parseRun(
      await run('brand', { sql: `SELECT order_id, REPEAT('x"y,', 500) AS pad FROM ${ORDERS} ORDER BY order_id LIMIT 150` }),
    );
    expect(data.truncated).toBe(true);
    expect(data.totalRows).toBe(150);
    expect(data.rowCount).toBeGreaterThan(0);
    expect(data.rowCount).toBeLessThan(150);
    expect(bytes).toBeLessThanOrEqual(RESULT_CAP);
    expect(bytes).toBeGreaterThan(RESULT_CAP * 0.9);
    expect(data.note).toContain(`${env.MCP_MAX_RESULT_BYTES} bytes`);
  });

  it('dry run: validates and estimates bytes without rows or billing', async () => {
    const data = await runOk('brand', { sql: `SELECT revenue FROM ${ORDERS}`, dryRun: true });
    expect(data).toMatchObject({
      rows: [],
      rowCount: 0,
      totalRows: 0,
      nextCursor: null,
      truncated: false,
      stats: { dryRun: true, totalBytesBilled: 0 },
    });
    expect(data.stats?.totalBytesProcessed).toBeGreaterThan(0);
  });

  it('logs the run with transport mcp and the MCP request id', async () => {
    const sql = `SELECT COUNT(*) AS n FROM ${ORDERS} WHERE channel = 'web'`;
    await runOk('brand', { sql });
    const row = await env.DB.prepare(
      'SELECT transport, outcome, brand_id, request_id FROM query_log WHERE sql = ? ORDER BY created_at DESC',
    )
      .bind(sql)
      .first();
    expect(row).toMatchObject({ transport: 'mcp', outcome: 'OK', brand_id: 'brand_acme', request_id: expect.stringMatching(/^req_/) });
  });
});

describe('a plain run_query that finishes within its wait', () => {
  /** The warehouse calls naming the SQL holding `marker` (the dry run, the run). */
  const calls = async (marker: string) => {
    const res = await fetch(`${env.BIGQUERY_API_BASE}/__requests?${new URLSearchParams({ sql: marker, limit: '500' })}`);
    const Entry = z.object({ op: z.string(), answer: z.object({ jobId: z.string().nullish() }).passthrough().nullish() });
    return z.object({ requests: z.array(Entry) }).parse(await res.json()).requests;
  };

  it("costs REST's synchronous run: dry run + one jobs.query, then one jobs.query; no job record; one log row each; billed once", async () => {
    const key = await addBrandKey('mcp quick');
    const client = await connectMcp(key.secret);
    try {
      const marker = `quick${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
      // CURRENT_DATE: never cached, so each run bills, as on BigQuery.
      const sql = `SELECT COUNT(*) AS n FROM ${ORDERS} WHERE order_date < CURRENT_DATE() /* ${marker} */`;
      const runIt = async () => parseRun(await client.callTool({ name: 'run_query', arguments: { sql } })).data;
      const first = await runIt();
      expect((await calls(marker)).map((c) => c.op)).toEqual(['insert', 'query']);
      const second = await runIt();
      // The verdict cache answers the gate the second time: the one jobs.query, as REST.
      const all = await calls(marker);
      expect(all.map((c) => c.op)).toEqual(['insert', 'query', 'query']);
      expect(first.rows).toEqual(second.rows);
      // And nothing else about either job: no getQueryResults, jobs.get or page read after the answer.
      const res = await fetch(`${env.BIGQUERY_API_BASE}/__requests?limit=500`);
      const paths = z
        .object({ requests: z.array(z.object({ path: z.string() })) })
        .parse(await res.json())
        .requests.map((r) => r.path);
      for (const c of all.slice(1)) expect(paths.filter((p) => p.includes(c.answer!.jobId!))).toEqual([]);
      // Nothing became a long query, and each run wrote its own row, with the job BigQuery kept for it.
      const jobs = await env.DB.prepare('SELECT COUNT(*) AS n FROM query_jobs WHERE sql = ?').bind(sql).first();
      expect(jobs).toEqual({ n: 0 });
      const logged = await env.DB.prepare('SELECT outcome, async_job_id, bq_job_id FROM query_log WHERE sql = ? ORDER BY created_at')
        .bind(sql)
        .all();
      expect(logged.results).toEqual([
        { outcome: 'OK', async_job_id: null, bq_job_id: all[1]!.answer!.jobId },
        { outcome: 'OK', async_job_id: null, bq_job_id: all[2]!.answer!.jobId },
      ]);
      // Settled (in waitUntil) to what the two runs billed, not to their reservations.
      const billed = (first.stats?.totalBytesBilled ?? 0) + (second.stats?.totalBytesBilled ?? 0);
      expect(billed).toBeGreaterThan(0);
      let used = await usedBytes(key.id);
      for (let i = 0; used !== billed && i < 40; i++) {
        await new Promise((r) => setTimeout(r, 250));
        used = await usedBytes(key.id);
      }
      expect(used).toBe(billed);
    } finally {
      await client.close();
    }
  }, 30_000);
});

describe('run_query paging with the cursor', () => {
  /** Warehouse executions of the SQL holding `marker`: jobs.query, and jobs.insert other than the dry run. */
  const executions = async (marker: string) => {
    const res = await fetch(`${env.BIGQUERY_API_BASE}/__requests?${new URLSearchParams({ sql: marker, limit: '500' })}`);
    const Entry = z.object({ op: z.string(), body: z.unknown() });
    const DryRun = z.object({ configuration: z.object({ dryRun: z.literal(true) }) });
    return z
      .object({ requests: z.array(Entry) })
      .parse(await res.json())
      .requests.filter((r) => r.op === 'query' || (r.op === 'insert' && !DryRun.safeParse(r.body).success));
  };

  it('walks a whole day of orders: every row exactly once, one warehouse job, bytes billed once, no run counted by pages', async () => {
    const marker = `walk${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
    // No ORDER BY: pages come from the stored result, so the order is the job's and nothing shifts between pages.
    const sql = `SELECT * FROM ${ORDERS} WHERE order_date = DATE_SUB(CURRENT_DATE(), INTERVAL 3 DAY) /* ${marker} */`;
    const first = parseRun(await run('brand', { sql }));
    expect(first.data.truncated).toBe(true);
    expect(first.data.stats?.totalBytesBilled).toBeGreaterThan(0);
    const total = first.data.totalRows;
    const rows = [...first.data.rows];
    const budget = first.data.usage;
    let cursor = first.data.nextCursor;
    let pages = 0;
    while (cursor) {
      const page = parseRun(await run('brand', { cursor }));
      pages++;
      expect(page.data).toMatchObject({ brandId: 'brand_acme', totalRows: total, stats: { totalBytesBilled: 0 } });
      // Pages do not spend the run budget.
      expect(page.data.usage).toMatchObject({ runsRemaining: budget.runsRemaining, runsLimit: budget.runsLimit });
      expect(page.data.firstRow).toBe(rows.length + 1);
      rows.push(...page.data.rows);
      cursor = page.data.nextCursor;
      expect(page.data.truncated).toBe(cursor !== null);
      expect(pages).toBeLessThan(50);
    }
    expect(rows).toHaveLength(total);
    expect(new Set(rows.map((r) => r.order_id)).size).toBe(total);
    // One execution, as REST's: a jobs.query that keeps its job for the cursor (docs/run-query.md); no long-query job.
    expect((await executions(marker)).map((e) => e.op)).toEqual(['query']);
    // The same SQL over REST (one page there) holds the same rows.
    const rest = (await postJson('/v1/data/query', 'brand', { sql })).body as RunData;
    expect(rest.totalRows).toBe(total);
    expect(new Set(rest.rows.map((r) => r.order_id))).toEqual(new Set(rows.map((r) => r.order_id)));
  }, 30_000);

  it('a result cut at the byte cap is paged from the one execution that produced it: one job, no second run (N1)', async () => {
    const marker = `cut${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
    // Fewer rows than MCP_ROW_CAP but over the byte cap; CURRENT_DATE makes it uncacheable, as on BigQuery, so a
    // second execution would bill again.
    const sql = `SELECT order_id, REPEAT('x', 600) AS pad FROM ${ORDERS} WHERE order_date < CURRENT_DATE() ORDER BY order_id LIMIT 150 /* ${marker} */`;
    const first = parseRun(await run('brand', { sql }));
    expect(first.data.truncated).toBe(true);
    expect(first.data.totalRows).toBe(150);
    // One execution: a jobs.query that keeps its job (JOB_CREATION_REQUIRED), so the cut pages from it.
    const runs = await executions(marker);
    expect(runs.map((e) => e.op)).toEqual(['query']);
    expect(runs[0]?.body).toMatchObject({ jobCreationMode: 'JOB_CREATION_REQUIRED' });
    const rows = [...first.data.rows];
    let cursor = first.data.nextCursor;
    while (cursor) {
      const page = parseRun(await run('brand', { cursor }));
      rows.push(...page.data.rows);
      cursor = page.data.nextCursor;
    }
    expect(new Set(rows.map((r) => r.order_id)).size).toBe(150);
    expect(await executions(marker)).toHaveLength(1);
  }, 30_000);

  it('a cursor works only for the key that ran the query, and only alone', async () => {
    const { data } = parseRun(await run('brand', { sql: `SELECT order_id FROM ${ORDERS}` }));
    const cursor = data.nextCursor ?? '';
    for (const key of ['org', 'other'] as const) {
      const error = errorOf(await run(key, { cursor }));
      expect(error).toMatchObject({ code: 'VALIDATION', details: { issues: [{ path: 'cursor' }] } });
      expect(error.message).not.toMatch(/job_|acme/);
    }
    expect(errorOf(await run('brand', { cursor, sql: 'SELECT 1' })).message).toMatch(/send cursor alone/);
    // The same cursor continues over REST too: one result, two transports.
    const rest = await postJson('/v1/data/query/page', 'brand', { cursor });
    expect(rest.status).toBe(200);
    expect((rest.body as RunData).rows[0]).toEqual((await runOk('brand', { cursor })).rows[0]);
  }, 30_000);

  it('results report the budget left and the per-query ceiling', async () => {
    const data = await runOk('brand', { sql: 'SELECT 1 AS one' });
    expect(data.usage.runsLimit).toBe(Number(env.DEFAULT_DAILY_QUERY_LIMIT));
    expect(data.usage.maxBytesBilled).toBe(Number(env.DEFAULT_MAX_BYTES_BILLED));
    expect(data.usage.runsRemaining).toBeLessThan(data.usage.runsLimit);
    // The key's long-query limits (running at once, longest duration): the Jobs-Limit / Job-Timeout headers of REST.
    expect(data.usage).toMatchObject({
      maxRunningJobs: Number(env.DEFAULT_MAX_RUNNING_JOBS),
      jobTimeoutMs: Number(env.DEFAULT_JOB_TIMEOUT_MS),
    });
  });
});

describe('run_query, stored queries (flow B)', () => {
  it('runs a report section with an explicit period, same rows as REST', async () => {
    const args = { queryId: 'rq_overview_channels', period: { cadence: 'MONTHLY' } };
    const { data: mcp } = parseRun(await run('brand', args));
    const rest = await postJson('/v1/data/query', 'brand', args);
    expect(rest.status).toBe(200);
    expect(mcp.rows).toEqual((rest.body as RunData).rows);
    expect(mcp.rowCount).toBeGreaterThan(0);
    expect(mcp.window).toEqual({ ...(rest.body as RunData).window, cadence: 'MONTHLY' });
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
    ["another tenant's table", 'brand', { sql: 'SELECT * FROM `service-v1.umbrella.fact__orders`' }, 'FORBIDDEN_TABLE'],
    ['a write', 'brand', { sql: `DELETE FROM ${ORDERS} WHERE TRUE` }, 'INVALID_SQL'],
    ['two statements', 'brand', { sql: 'SELECT 1; SELECT 2' }, 'INVALID_SQL'],
    ['an unknown query id', 'brand', { queryId: 'rq_does_not_exist' }, 'QUERY_NOT_FOUND'],
    ["another tenant's saved query", 'brand', { queryId: 'sq_umbrella_monthly_kpis' }, 'QUERY_NOT_FOUND'],
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
