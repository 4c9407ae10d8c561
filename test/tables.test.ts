import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { completeness } from '../src/features/tables/coverage';
import { familySummary } from '../src/features/tables/table-metadata';
import { parseIsoDate } from '../src/features/query/period';
import { TableDescriptionSchema, TableListSchema } from '../src/features/tables/tables.schemas';
import { connectMcp, textData } from './mcp-client';
import { addBrandKey, api, expectError, seedDemo, TEST_KEYS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

/** The warehouse calls whose URL path contains `needle` (the local warehouse's request journal). */
async function journal(op: string, sql?: string, label?: string): Promise<{ op: string; path: string }[]> {
  const filter = new URLSearchParams({ op, limit: '500', ...(sql ? { sql } : {}), ...(label ? { label } : {}) });
  const res = await fetch(`${env.BIGQUERY_API_BASE}/__requests?${filter}`);
  return z.object({ requests: z.array(z.object({ op: z.string(), path: z.string() })) }).parse(await res.json()).requests;
}

async function logCount(): Promise<number> {
  const row = await env.DB.prepare('SELECT count(*) AS n FROM query_log').first<{ n: number }>();
  return row?.n ?? 0;
}

describe('GET /v1/data/brands/{brandId}/tables/{table} (describeTable)', () => {
  it('describes a table from tables.get: columns with types and descriptions, layer, row count, coverage, the memories that apply', async () => {
    const res = await api('/v1/data/brands/brand_acme/tables/fact__orders', 'brand');
    expect(res.status).toBe(200);
    const t = TableDescriptionSchema.parse(res.body);
    expect(t).toMatchObject({
      brandId: 'brand_acme',
      table: 'fact__orders',
      sqlName: '`service-v1.acme.fact__orders`',
      layer: 'mart',
      type: 'TABLE',
      description: expect.stringContaining('One row per order'),
    });
    // The warehouse's own count: acme has 500,000 orders (docs/demo-data.md).
    expect(t.rowCount).toBe(500_000);
    expect(t.columns.map((c) => [c.name, c.type])).toContainEqual(['revenue', 'FLOAT']);
    expect(t.columns.find((c) => c.name === 'revenue')?.description).toMatch(/excluding tax/);
    expect(t.coverage?.firstDay).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(t.coverage!.firstDay < t.coverage!.lastDay).toBe(true);
    // Memories: the system one on fact__orders, the org's general one, acme's own; not umbrella's; each once; REST
    // keeps author and timestamps.
    const ids = t.memories.map((m) => m.memoryId);
    expect(ids).toEqual(expect.arrayContaining(['mem_demo_orders_revenue', 'mem_demo_monthly_date_column', 'mem_demo_acme_orders_size']));
    expect(ids).not.toContain('mem_demo_umbrella_orders_currency');
    expect(ids).not.toContain('mem_demo_daily_revenue_source');
    expect(new Set(ids).size).toBe(ids.length);
    expect(t.memories[0]).toHaveProperty('author');
  });

  it('spends no run, writes no query_log row and starts no warehouse job', async () => {
    // A key of its own: the warehouse is shared with the files running beside this one, and every job the Worker
    // starts carries its caller's label, so jobs labelled with this key are this test's and no other file's.
    const key = await addBrandKey('describe spends nothing');
    const call = (path: string, init: RequestInit = {}) =>
      SELF.fetch(`http://api.test${path}`, { ...init, headers: { ...init.headers, authorization: `Bearer ${key.secret}` } });
    /** Runs left in the key's budget, as a dry run reports it (a dry run counts no run, but is a labelled job). */
    const keyRunsLeft = async () => {
      const res = await call('/v1/data/query', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // SQL of its own, so no cached verdict spares the dry run (the verdict cache outlives a test file).
        body: JSON.stringify({ sql: `SELECT '${key.id}' AS marker`, dryRun: true }),
      });
      expect(res.status).toBe(200);
      return Number(res.headers.get('RateLimit-Remaining'));
    };
    const label = `principal:key_${key.id}`;
    const jobsOfKey = async () => (await journal('query', undefined, label)).length + (await journal('insert', undefined, label)).length;
    const before = await keyRunsLeft();
    const jobsBefore = await jobsOfKey();
    // The count can fail: the dry run above is a job with the key's label.
    expect(jobsBefore).toBeGreaterThan(0);
    const logs = await logCount();
    const res = await call('/v1/data/brands/brand_acme/tables/agg__daily_revenue');
    expect(res.status).toBe(200);
    expect(await jobsOfKey()).toBe(jobsBefore);
    expect(await logCount()).toBe(logs);
    expect((await journal('tablesGet')).some((r) => r.path.endsWith('/datasets/acme/tables/agg__daily_revenue'))).toBe(true);
    expect(await keyRunsLeft()).toBe(before);
  });

  it('an unknown table is 404 NOT_FOUND, in words that say how to list the tables', async () => {
    const err = expectError(await api('/v1/data/brands/brand_acme/tables/fact__nope', 'brand'), 404, 'NOT_FOUND');
    expect(err.message).toMatch(/fact__nope does not exist/);
  });

  it.each([
    ["another tenant's brand", '/v1/data/brands/brand_umbrella/tables/fact__orders', 403, 'FORBIDDEN_BRAND'],
    ['a brand without a dataset', '/v1/data/brands/brand_initech/tables/fact__orders', 409, 'BRAND_NOT_PROVISIONED'],
    ['a qualified name', '/v1/data/brands/brand_acme/tables/acme.fact__orders', 400, 'VALIDATION'],
  ] as const)('refuses %s', async (_name, path, status, code) => {
    expectError(await api(path, 'org'), status, code);
  });
});

describe('GET /v1/data/brands/{brandId}/tables (listTables)', () => {
  it("lists the brand's tables with description, layer, row count and coverage, no run spent", async () => {
    const logs = await logCount();
    const res = await api('/v1/data/brands/brand_globex/tables', 'org');
    expect(res.status).toBe(200);
    const list = TableListSchema.parse(res.body);
    expect(list.dataset).toBe('globex');
    const names = list.tables.map((t) => t.table);
    expect(names).toEqual(expect.arrayContaining(['fact__orders', 'dim__customers', 'report__monthly_kpis', 'raw__web_events']));
    expect(list.tables.find((t) => t.table === 'fact__orders')).toMatchObject({
      layer: 'mart',
      rowCount: 20_000,
      sqlName: '`service-v1.globex.fact__orders`',
    });
    expect(list.tables.find((t) => t.table === 'raw__web_events')?.layer).toBe('raw');
    expect(list.tables.every((t) => typeof t.description === 'string' && t.description.length > 0)).toBe(true);
    expect(await logCount()).toBe(logs);
  });
});

describe('coverage says how complete the last period is', () => {
  const day = (iso: string) => parseIsoDate(iso)!;

  it.each([
    // [firstDay, lastDay, today] -> lastCompleteDay, partialMonth, partialWeek
    ['data to yesterday, a Thursday mid-month', '2026-01-01', '2026-11-26', '2026-11-27', '2026-11-26', '2026-11', '2026-11-23'],
    ['data to today: today is not over', '2026-01-01', '2026-11-27', '2026-11-27', '2026-11-26', '2026-11', '2026-11-23'],
    ['data dated ahead of today (a forecast)', '2026-01-01', '2026-12-31', '2026-11-27', '2026-11-26', '2026-11', '2026-11-23'],
    ['a stale table ending on a month end, a Saturday', '2026-01-01', '2026-10-31', '2026-11-27', '2026-10-31', null, '2026-10-26'],
    ['ending on a Sunday mid-month', '2026-01-01', '2026-11-22', '2026-11-27', '2026-11-22', '2026-11', null],
    ['ending on a Sunday that ends the month', '2026-01-01', '2026-05-31', '2026-11-27', '2026-05-31', null, null],
    ['a leap February, not over', '2028-01-01', '2028-02-28', '2028-03-10', '2028-02-28', '2028-02', '2028-02-28'],
    ['a leap February, over', '2028-01-01', '2028-02-29', '2028-03-10', '2028-02-29', null, '2028-02-28'],
    ['only today has data', '2026-11-27', '2026-11-27', '2026-11-27', null, null, null],
  ] as const)('%s', (_what, firstDay, lastDay, today, lastCompleteDay, partialMonth, partialWeek) => {
    expect(completeness({ firstDay, lastDay }, day(today))).toEqual({ lastCompleteDay, partialMonth, partialWeek });
  });

  it('REST gives it with every covered table, list and description; MCP with the one table described, not in the list', async () => {
    const described = TableDescriptionSchema.parse((await api('/v1/data/brands/brand_acme/tables/fact__orders', 'brand')).body);
    const c = described.coverage!;
    // The demo's data runs to yesterday (UTC: the demo brands have no time zone), which is over.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect(c.lastDay).toBe(yesterday);
    expect(c.lastCompleteDay).toBe(yesterday);
    const endsMonth = new Date(Date.parse(`${yesterday}T00:00:00Z`) + 86_400_000).getUTCDate() === 1;
    expect(c.partialMonth).toBe(endsMonth ? null : yesterday.slice(0, 7));
    expect(c.partialWeek === null).toBe(new Date(`${yesterday}T00:00:00Z`).getUTCDay() === 0);
    if (c.partialWeek !== null) expect(new Date(`${c.partialWeek}T00:00:00Z`).getUTCDay()).toBe(1);

    const list = TableListSchema.parse((await api('/v1/data/brands/brand_acme/tables', 'brand')).body);
    for (const t of list.tables.filter((x) => x.coverage !== null)) {
      expect(t.coverage, t.table).toHaveProperty('lastCompleteDay');
      expect(t.coverage, t.table).toHaveProperty('partialMonth');
      expect(t.coverage, t.table).toHaveProperty('partialWeek');
    }
    expect(list.tables.find((t) => t.table === 'fact__orders')?.coverage).toEqual(c);

    const client = await connectMcp(TEST_KEYS.brand);
    const one = z
      .object({ coverage: z.unknown() })
      .parse(textData(await client.callTool({ name: 'describe_table', arguments: { brandId: 'brand_acme', table: 'fact__orders' } })));
    expect(one.coverage).toEqual(c);
    const listed = TableListSchema.parse(textData(await client.callTool({ name: 'describe_table', arguments: { brandId: 'brand_acme' } })));
    // Compact: first and last day only on each line of the listing.
    expect(listed.tables.find((t) => t.table === 'fact__orders')?.coverage).toEqual({ firstDay: c.firstDay, lastDay: c.lastDay });
    for (const t of listed.tables) if (t.coverage) expect(Object.keys(t.coverage).sort(), t.table).toEqual(['firstDay', 'lastDay']);
    await client.close();
  });

  it("a shard family's coverage spans its shards and says how complete it is", () => {
    // The local warehouse's shards carry no coverage labels (views), so the family's summary is built here directly.
    const info = { schema: [], description: 'one day', numRows: 10, numBytes: 100, labels: {}, type: 'TABLE', lastModifiedTime: null };
    const entry = {
      table: 'events_*',
      latest: 'events_20261126',
      shards: { count: 60, first: '20260928', last: '20261126' },
      coverage: { firstDay: '2026-09-28', lastDay: '2026-11-26' },
    };
    expect(familySummary({ brandId: 'b', dataset: 'd', today: day('2026-11-27') }, entry, info).coverage).toEqual({
      firstDay: '2026-09-28',
      lastDay: '2026-11-26',
      lastCompleteDay: '2026-11-26',
      partialMonth: '2026-11',
      partialWeek: '2026-11-23',
    });
  });
});
