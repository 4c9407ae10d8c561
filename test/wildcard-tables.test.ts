import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { verdictCache } from '../src/features/query/verdict-cache';
import { connectMcp, errorOf, textData } from './mcp-client';
import { RunResultSchema } from './run-query-fixtures';
import { expectError, postJson, seedDemo, TEST_KEYS } from './seed';

// Wildcard tables end to end through the Worker: umbrella's dataset holds 60 daily events_YYYYMMDD shards in the
// local warehouse, so `events_*` makes BigQuery's dry run list 50 tables (the most it promises to list), past the
// gate's 50-table rule, which lets wildcard shards of the brand's own dataset through and nothing else.

const EVENTS = '`service-v1.umbrella.events_*`';
const SHARDS = 60;
const PER_DAY = `SELECT _TABLE_SUFFIX AS day, COUNT(*) AS events FROM ${EVENTS} GROUP BY day ORDER BY day`;

let other: Client;

beforeAll(async () => {
  await seedDemo();
  other = await connectMcp(TEST_KEYS.other);
});
afterAll(async () => {
  await other.close();
});
beforeEach(() => {
  verdictCache.clear();
});

/** The last days of the shards: the 60 days ending the day before the warehouse's today, as YYYYMMDD. */
function expectedDays(): string[] {
  const today = Date.parse(`${inject('warehouseToday')}T00:00:00Z`);
  return Array.from({ length: SHARDS }, (_, k) =>
    new Date(today - (SHARDS - k) * 86_400_000).toISOString().slice(0, 10).replaceAll('-', ''),
  );
}

describe('wildcard tables over 50+ shards of the brand dataset', () => {
  it('REST: a wildcard over 60 shards runs, one row per shard, _TABLE_SUFFIX included', async () => {
    const res = await postJson('/v1/data/query', 'other', { sql: PER_DAY, brandId: 'brand_umbrella' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const body = RunResultSchema.parse(res.body);
    expect(body.brandId).toBe('brand_umbrella');
    expect(body.rows.map((r) => r.day)).toEqual(expectedDays());
    expect(body.rows.every((r) => Number(r.events) > 0)).toBe(true);
    expect(body.truncated).toBe(false);
  });

  it('REST: the dry run of the same query passes both gates', async () => {
    const res = await postJson('/v1/data/query', 'other', {
      sql: `SELECT COUNT(*) AS n FROM ${EVENTS}`,
      brandId: 'brand_umbrella',
      dryRun: true,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(RunResultSchema.parse(res.body).stats?.dryRun).toBe(true);
  });

  it('MCP: run_query answers the same rows as REST', async () => {
    const rest = RunResultSchema.parse((await postJson('/v1/data/query', 'other', { sql: PER_DAY, brandId: 'brand_umbrella' })).body);
    const mcp = textData(await other.callTool({ name: 'run_query', arguments: { sql: PER_DAY, brandId: 'brand_umbrella' } }));
    expect(mcp.rows).toEqual(rest.rows);
    expect(mcp.brandId).toBe('brand_umbrella');
  });

  it('the 50-table rule still holds when a wildcard is read beside another table', async () => {
    const sql = `SELECT COUNT(*) AS n FROM ${EVENTS} WHERE customer_id IN (SELECT customer_id FROM \`service-v1.umbrella.dim__customers\`)`;
    const err = expectError(await postJson('/v1/data/query', 'other', { sql, brandId: 'brand_umbrella' }), 400, 'QUERY_FAILED');
    // 61 tables, of which BigQuery's dry run lists 50 ("will not have a complete list" past 50).
    expect(err.message).toMatch(/reads 50 tables as BigQuery counts them .*over the limit of 49/);
  });
});

describe("a wildcard never reaches another brand's dataset", () => {
  it.each(['brand', 'org'] as const)('REST, the %s key naming acme: umbrella events_* is 403 FORBIDDEN_TABLE', async (key) => {
    const res = await postJson('/v1/data/query', key, { sql: `SELECT COUNT(*) AS n FROM ${EVENTS}`, brandId: 'brand_acme' });
    const err = expectError(res, 403, 'FORBIDDEN_TABLE');
    expect(err.message).not.toContain('demo-analytics-dev');
  });

  it('MCP: the same wildcard from an acme key is refused', async () => {
    const brand = await connectMcp(TEST_KEYS.brand);
    try {
      const err = errorOf(await brand.callTool({ name: 'run_query', arguments: { sql: `SELECT COUNT(*) AS n FROM ${EVENTS}` } }));
      expect(err.code).toBe('FORBIDDEN_TABLE');
    } finally {
      await brand.close();
    }
  });

  it("a wildcard of the brand's own dataset that matches no table is the warehouse's notFound, as QUERY_FAILED", async () => {
    const res = await postJson('/v1/data/query', 'brand', { sql: 'SELECT COUNT(*) AS n FROM `service-v1.acme.events_*`' });
    const err = expectError(res, 400, 'QUERY_FAILED');
    expect(err.details).toMatchObject({ stage: 'warehouse', reason: 'notFound' });
  });
});
