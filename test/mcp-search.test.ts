import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FetchOutput, SearchOutput } from '../src/features/search/search.tools';
import { errorOf, mcpClientsPerKey, okData, texts } from './mcp-client';
import { api, TEST_KEYS, type TestKey } from './seed';

const clients = mcpClientsPerKey(TEST_KEYS);

// OpenAI's shapes, strictly: nothing more than these fields.
const SearchText = z.strictObject({ results: z.array(z.strictObject({ id: z.string(), title: z.string(), url: z.url() })) });
const FetchText = z.strictObject({
  id: z.string(),
  title: z.string(),
  text: z.string(),
  url: z.url(),
  metadata: z.record(z.string(), z.string()).optional(),
});

/** The one text item of a search result, parsed with OpenAI's shape. */
async function search(key: TestKey, query: string) {
  const raw = await clients[key].callTool({ name: 'search', arguments: { query } });
  okData(raw, SearchOutput);
  const items = texts(raw);
  expect(items).toHaveLength(1);
  return SearchText.parse(JSON.parse(items[0] ?? '')).results;
}

async function fetchItem(key: TestKey, id: string) {
  const raw = await clients[key].callTool({ name: 'fetch', arguments: { id } });
  okData(raw, FetchOutput);
  const items = texts(raw);
  expect(items).toHaveLength(1);
  return FetchText.parse(JSON.parse(items[0] ?? ''));
}

const OWN: Record<TestKey, string[]> = {
  org: ['brand_acme', 'brand_globex', 'brand_initech'],
  brand: ['brand_acme'],
  other: ['brand_umbrella'],
};
const ALL_BRANDS = ['brand_acme', 'brand_globex', 'brand_initech', 'brand_umbrella'];

describe('search', () => {
  it.each(['org', 'brand', 'other'] as const)('%s key: brands, reports, sections and tables of its own tenants only', async (key) => {
    const seen = new Set<string>();
    for (const q of ['brand', 'report', 'revenue', 'orders', 'table', 'fact__', 'SELECT'])
      for (const r of await search(key, q)) seen.add(r.id);
    expect(seen.size).toBeGreaterThan(3);
    for (const id of seen) {
      const brandId = id.split(':')[1];
      if (id.startsWith('saved:')) continue; // saved query ids carry no brand; checked by fetch below
      expect(OWN[key], id).toContain(brandId);
    }
    for (const foreign of ALL_BRANDS.filter((b) => !OWN[key].includes(b))) expect(await search(key, foreign)).toEqual([]);
    const kinds = new Set([...seen].map((id) => id.split(':')[0]));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['brand', 'report', 'section', 'table']));
  });

  it('finds a table by name, with a link that names it', async () => {
    const results = await search('brand', 'fact__orders');
    const table = results.find((r) => r.id === 'table:brand_acme:fact__orders');
    expect(table?.title).toBe('Table service-v1.acme.fact__orders');
    expect(table?.url).toContain('service-v1.acme.fact__orders');
  });

  it('refuses arguments outside its schema', async () => {
    const raw = await clients.brand.callTool({ name: 'search', arguments: { query: 'x', limit: 5 } });
    expect(raw.isError).toBe(true);
  });
});

describe('fetch', () => {
  it("a report: its instructions and every section's SQL", async () => {
    const reportId = (await search('brand', 'report')).find((r) => r.id.startsWith('report:'))?.id;
    if (!reportId) throw new Error('no report found');
    const item = await fetchItem('brand', reportId);
    expect(item.id).toBe(reportId);
    expect(item.metadata?.kind).toBe('report');
    expect(item.text).toMatch(/SQL:\n(SELECT|WITH)/i);
  });

  it('a table: its columns (from INFORMATION_SCHEMA.COLUMNS)', async () => {
    const item = await fetchItem('brand', 'table:brand_acme:fact__orders');
    expect(item.text).toMatch(/Columns:/);
    expect(item.text).toContain('order_id');
  });

  it("a saved query of the caller; another tenant's ids are NOT_FOUND, same as unknown ones", async () => {
    const globex = await api('/v1/data/queries?brandId=brand_globex', 'org');
    const savedId = z.object({ queries: z.array(z.object({ id: z.string() })) }).parse(globex.body).queries[0]?.id;
    if (!savedId) throw new Error('demo has no globex saved query');
    expect((await fetchItem('org', `saved:${savedId}`)).text).toMatch(/SQL:/);
    for (const [key, id] of [
      ['brand', `saved:${savedId}`],
      ['other', `saved:${savedId}`],
      ['brand', 'brand:brand_globex'],
      ['other', 'table:brand_acme:fact__orders'],
      ['brand', 'report:brand_umbrella:rpt_business_overview'],
      ['org', 'nonsense'],
    ] as const) {
      const error = errorOf(await clients[key].callTool({ name: 'fetch', arguments: { id } }));
      expect(error.code, `${key} ${id}`).toMatch(/NOT_FOUND|FORBIDDEN_BRAND/);
    }
  });
});
