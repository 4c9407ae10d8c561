// Sharded tables are one table (issue 39): umbrella's dataset holds 60 daily events_YYYYMMDD shards in the local
// warehouse (dev/warehouse/demo-data.mjs). The REST tables list, describe_table and search list the family once as
// events_* with its first and last suffix and shard count, as BigQuery's console does; describing the family
// describes its latest shard.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TableDescriptionSchema, TableListSchema } from '../src/features/tables/tables.schemas';
import { mcpClientsPerKey, textData } from './mcp-client';
import { api, TEST_KEYS } from './seed';

const clients = mcpClientsPerKey(TEST_KEYS);

describe('a family of date shards is one table', () => {
  it('REST: the tables list has events_* once, with its range and count, and no single shard', async () => {
    const res = await api('/v1/data/brands/brand_umbrella/tables', 'other');
    expect(res.status).toBe(200);
    const { tables } = TableListSchema.parse(res.body);
    expect(tables.filter((t) => /^events_\d{8}$/.test(t.table))).toEqual([]);
    const family = tables.filter((t) => t.table === 'events_*');
    expect(family).toHaveLength(1);
    const [events] = family;
    expect(events).toMatchObject({ sqlName: '`service-v1.umbrella.events_*`', rowCount: null, shards: { count: 60 } });
    expect(events!.shards!.first < events!.shards!.last).toBe(true);
    expect(events!.shards!.first).toMatch(/^\d{8}$/);
    // Coverage spans the shards: one day each, the first shard's day to the last one's.
    const day = (s: string) => `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6)}`;
    if (events!.coverage) expect(events!.coverage).toEqual({ firstDay: day(events!.shards!.first), lastDay: day(events!.shards!.last) });
    // Everything else is listed as it was.
    expect(tables.map((t) => t.table)).toContain('fact__orders');
  });

  it("describing the family describes its latest shard's schema, and a single shard is still describable", async () => {
    const { tables } = TableListSchema.parse((await api('/v1/data/brands/brand_umbrella/tables', 'other')).body);
    const shards = tables.find((t) => t.table === 'events_*')!.shards!;
    const family = TableDescriptionSchema.parse((await api('/v1/data/brands/brand_umbrella/tables/events_*', 'other')).body);
    const latest = TableDescriptionSchema.parse((await api(`/v1/data/brands/brand_umbrella/tables/events_${shards.last}`, 'other')).body);
    expect(family).toMatchObject({ table: 'events_*', shards, rowCount: null, type: latest.type, description: latest.description });
    expect(family.columns).toEqual(latest.columns);
    expect(latest.shards).toBeUndefined();
    expect((await api('/v1/data/brands/brand_umbrella/tables/nothing_*', 'other')).status).toBe(404);
  });

  it('MCP: describe_table lists the family once and describes it; search finds it once, with its range', async () => {
    const list = TableListSchema.parse(textData(await clients.other.callTool({ name: 'describe_table', arguments: {} })));
    expect(list.tables.filter((t) => t.table.startsWith('events_')).map((t) => t.table)).toEqual(['events_*']);
    const family = textData(await clients.other.callTool({ name: 'describe_table', arguments: { table: 'events_*' } }));
    expect(family).toMatchObject({ table: 'events_*', shards: { count: 60 } });
    const found = z
      .object({ results: z.array(z.object({ id: z.string(), text: z.string() })) })
      .parse(textData(await clients.other.callTool({ name: 'search', arguments: { query: 'storefront events' } })));
    const tableIds = found.results.map((r) => r.id).filter((id) => id.startsWith('table:brand_umbrella:events_'));
    expect(tableIds).toEqual(['table:brand_umbrella:events_*']);
    const fetched = textData(await clients.other.callTool({ name: 'fetch', arguments: { id: 'table:brand_umbrella:events_*' } }));
    expect(JSON.parse(String(fetched.text))).toMatchObject({ table: 'events_*', shards: { count: 60 } });
  });
});
