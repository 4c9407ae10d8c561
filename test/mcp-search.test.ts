import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FetchOutput, SearchOutput } from '../src/features/search/search.tools';
import { SNIPPET_CHARS } from '../src/features/search/match';
import { errorOf, mcpClientsPerKey, textData, texts } from './mcp-client';
import { signedIn } from './admin-client';
import { location, TestBrowser } from './oauth-client';
import { api, postJson, TEST_ADMINS, TEST_KEYS, type TestKey } from './seed';

const clients = mcpClientsPerKey(TEST_KEYS);

// OpenAI's shapes, strictly: a search result is id, title, url and the snippet as `text` (OpenAI's sample server).
const SearchText = z.strictObject({
  results: z.array(z.strictObject({ id: z.string(), title: z.string(), url: z.url(), text: z.string().min(1) })),
  note: z.string().optional(),
});
const FetchText = z.strictObject({
  id: z.string(),
  title: z.string(),
  text: z.string(),
  url: z.url(),
  metadata: z.record(z.string(), z.string()).optional(),
});

/**
 * A text-only result (`textData`: no `structuredContent` beside it, which ChatGPT would read too) whose JSON
 * matches the tool's output schema; returned as sent, for the strict OpenAI shapes below.
 */
function onlyText(raw: unknown, output: z.ZodType): unknown {
  const data = textData(raw);
  output.parse(data);
  return data;
}

/** The one text item of a search result, parsed with OpenAI's shape. */
async function searchAnswer(key: TestKey, query: string) {
  const raw = await clients[key].callTool({ name: 'search', arguments: { query } });
  const answer = SearchText.parse(onlyText(raw, SearchOutput));
  // The note is there exactly when nothing matched.
  expect(answer.note === undefined, query).toBe(answer.results.length > 0);
  return answer;
}

async function search(key: TestKey, query: string) {
  return (await searchAnswer(key, query)).results;
}

async function fetchItem(key: TestKey, id: string) {
  return FetchText.parse(onlyText(await clients[key].callTool({ name: 'fetch', arguments: { id } }), FetchOutput));
}

/** The administrator who manages what each key reaches (org_other has none in the seed). */
const ADMIN_OF: Partial<Record<TestKey, (typeof TEST_ADMINS)[keyof typeof TEST_ADMINS]>> = {
  org: TEST_ADMINS.org,
  brand: TEST_ADMINS.brand,
};

async function fetchError(key: TestKey, id: string) {
  return errorOf(await clients[key].callTool({ name: 'fetch', arguments: { id } }));
}

/** Brands with data each key reaches (brand_initech has no dataset: never a result). */
const OWN: Record<TestKey, string[]> = {
  org: ['brand_acme', 'brand_globex'],
  brand: ['brand_acme'],
  other: ['brand_umbrella'],
};
const ALL_BRANDS = ['brand_acme', 'brand_globex', 'brand_initech', 'brand_umbrella'];
/** Queries that together reach every kind of item. */
const BROAD = ['brand', 'report', 'revenue', 'orders', 'fact__', 'channel', 'customers', 'memory', 'SELECT', 'tax'];

async function everything(key: TestKey) {
  const seen = new Map<string, { id: string; title: string; url: string; text: string }>();
  for (const results of await Promise.all(BROAD.map((q) => search(key, q)))) for (const r of results) seen.set(r.id, r);
  return [...seen.values()];
}

/** The brands an item belongs to, from fetch's metadata. */
function brandsOf(metadata: Record<string, string> | undefined): string[] {
  const m = metadata ?? {};
  return [...(m.brandId ? [m.brandId] : []), ...(m.brandIds ? m.brandIds.split(',') : [])];
}

describe('search', () => {
  it.each(['org', 'brand', 'other'] as const)(
    '%s key: every kind of item, of its own brands with data only (fetched), each url a page its administrator can read',
    async (key) => {
      const all = await everything(key);
      expect([...new Set(all.map((r) => r.id.split(':')[0]))].sort()).toEqual(['brand', 'memory', 'report', 'saved', 'section', 'table']);
      const admin = ADMIN_OF[key];
      const browser = admin ? await signedIn(admin) : null;
      const stranger = new TestBrowser('198.51.100.77');
      await Promise.all(
        all.map(async (r) => {
          const item = await fetchItem(key, r.id);
          expect(item.id).toBe(r.id);
          expect(item.url).toBe(r.url);
          for (const b of brandsOf(item.metadata)) expect(OWN[key], r.id).toContain(b);
          // The url is the console page of the item: without a session it asks to sign in; the administrator of what
          // the key reaches reads it there (its id, and the text fetch gives).
          const u = new URL(r.url);
          expect(u.pathname, r.url).toBe(`/admin/search/${r.id}`);
          const anonymous = await stranger.get(u.pathname);
          expect(anonymous.status, r.url).toBe(303);
          expect(location(anonymous).pathname).toBe('/admin/login');
          if (!browser) return;
          const res = await browser.get(u.pathname);
          expect(res.status, r.url).toBe(200);
          expect(res.headers.get('content-type'), r.url).toMatch(/text\/html/);
          expect(await res.text(), r.url).toContain(`<code>${r.id}</code>`);
        }),
      );
      for (const foreign of ALL_BRANDS.filter((b) => !OWN[key].includes(b))) expect(await search(key, foreign)).toEqual([]);
    },
    // About 60 fetches and GETs per key: in parallel, but the whole suite shares two cores.
    60_000,
  );

  it('quotes the matched text with each result, short', async () => {
    for (const q of ['unit_price', 'tax', 'anonymous visitors', 'Store sales']) {
      const results = await search('org', q);
      expect(results.length, q).toBeGreaterThan(0);
      for (const r of results) expect(r.text.length, r.id).toBeLessThanOrEqual(SNIPPET_CHARS + 2);
    }
    const [price] = await search('org', 'unit_price');
    expect(price?.id).toMatch(/^table:brand_(acme|globex):dim__products$/);
    expect(price?.text).toMatch(/^Column unit_price FLOAT: List price/);
    const tax = (await search('org', 'tax')).find((r) => r.id === 'memory:mem_demo_orders_revenue');
    // Plain text, not the memory's Markdown.
    expect(tax?.text).toMatch(/Tax is not included/);
    for (const results of await Promise.all(BROAD.map((q) => search('org', q)))) {
      for (const r of results) expect(r.text, r.id).not.toMatch(/\*\*|`/);
    }
  });

  it('says "nothing matched" when a word matches nothing, instead of presenting partial matches as hits', async () => {
    // org_demo has a Customer Health report, but nothing of Umbrella: "health" alone is no answer to this query.
    expect(await searchAnswer('org', 'Umbrella Health')).toEqual({
      results: [],
      note: 'Nothing matched "Umbrella Health": no item these credentials can see mentions "umbrella".',
    });
    // Every word matches something, but no one item has both.
    const apart = await searchAnswer('brand', 'anonymous segment');
    expect(apart.results).toEqual([]);
    expect(apart.note).toMatch(/no item these credentials can see has all of its words; search with fewer words\.$/);
  });

  it('ranks the phrase and whole words in the title first, and quotes what describes the result', async () => {
    expect((await search('org', 'Customer Health'))[0]?.id).toBe('report:rpt_demo_customer_health');
    const [globex] = await search('org', 'Globex Coffee');
    expect(globex).toMatchObject({
      id: 'brand:brand_globex',
      text: expect.stringMatching(/^Brand Globex Coffee \(brandId brand_globex\)/),
    });
    // A section or saved query matched in its SQL is quoted by what it is, never by a line of code.
    for (const q of ['revenue', 'DESC', 'LIMIT']) {
      for (const r of (await search('org', q)).filter((x) => /^(section|saved):/.test(x.id))) {
        expect(r.text, `${q} ${r.id}`).not.toMatch(/\b(SELECT|ORDER BY|LIMIT \d|FROM)\b/);
      }
    }
  });

  it('indexes columns, table descriptions and memories: "coffee sales" finds Globex orders and its store report', async () => {
    const ids = (await search('org', 'coffee sales')).map((r) => r.id);
    expect(ids).toContain('table:brand_globex:fact__orders');
    expect(ids).toContain('report:rpt_globex_stores');
    expect(ids.filter((id) => id.startsWith('table:')).every((id) => id.startsWith('table:brand_globex:'))).toBe(true);
    // A memory about a table is found with the table: "anonymous" is only in Umbrella's memory on raw__web_events.
    const anon = (await search('other', 'anonymous')).map((r) => r.id);
    expect(anon).toEqual(expect.arrayContaining(['memory:mem_demo_umbrella_web_events', 'table:brand_umbrella:raw__web_events']));
    // A column: `segment` is a column of dim__customers only.
    expect((await search('brand', 'segment')).map((r) => r.id)).toContain('table:brand_acme:dim__customers');
  });

  it('one result per report, whatever the number of brands it applies to; none for a brand without data', async () => {
    const all = await everything('org');
    expect(new Set(all.map((r) => r.id)).size).toBe(all.length);
    const overview = all.filter((r) => r.id.includes('rpt_business_overview'));
    expect(overview.filter((r) => r.id.startsWith('report:')).map((r) => r.id)).toEqual(['report:rpt_business_overview']);
    const item = await fetchItem('org', 'report:rpt_business_overview');
    expect(item.metadata?.brandIds).toBe('brand_acme,brand_globex');
    expect(await search('org', 'Initech')).toEqual([]);
    expect(all.some((r) => r.id.includes('initech'))).toBe(false);
    expect((await fetchError('org', 'brand:brand_initech')).code).toBe('NOT_FOUND');
  });

  it('a brand key never sees another brand: not its memories, tables, columns or reports', async () => {
    for (const q of ['GBP', 'Umbrella', 'coffee', 'Globex', 'clinics']) expect(await search('brand', q), q).toEqual([]);
    for (const q of ['Acme', 'Outdoor']) expect(await search('other', q), q).toEqual([]);
    for (const [key, id] of [
      ['brand', 'memory:mem_demo_umbrella_orders_currency'],
      ['brand', 'table:brand_globex:fact__orders'],
      ['brand', 'report:rpt_globex_stores'],
      ['other', 'memory:mem_demo_acme_orders_size'],
      ['other', 'report:rpt_acme_trading'],
    ] as const)
      expect((await fetchError(key, id)).code, `${key} ${id}`).toMatch(/NOT_FOUND|FORBIDDEN_BRAND/);
  });

  it("the console's search pages: the same results for the signed-in administrator, nothing beyond their reach", async () => {
    const org = await signedIn(TEST_ADMINS.org);
    const found = await (await org.get('/admin/search?q=coffee+sales')).text();
    expect(found).toContain('href="/admin/search/table:brand_globex:fact__orders"');
    expect(found).toContain('href="/admin/search/report:rpt_globex_stores"');
    // The Acme administrator reaches Acme only: Globex's items are not found, in the listing or by address.
    const acme = await signedIn(TEST_ADMINS.brand, '198.51.100.51');
    expect(await (await acme.get('/admin/search?q=coffee+sales')).text()).not.toContain('brand_globex');
    for (const id of ['table:brand_globex:fact__orders', 'report:rpt_globex_stores', 'memory:mem_demo_umbrella_orders_currency']) {
      const res = await acme.get(`/admin/search/${id}`);
      expect(res.status, id).toBe(404);
      expect(await res.text()).toContain('that you can see');
    }
    const table = await acme.get('/admin/search/table:brand_acme:fact__orders');
    expect(table.status).toBe(200);
    expect(await table.text()).toContain('order_date');
  });

  it('spends no run and writes no query log row, cold or warm', async () => {
    const runsLeft = async () =>
      Number((await postJson('/v1/data/query', 'brand', { sql: 'SELECT 1', dryRun: true })).headers.get('RateLimit-Remaining'));
    const logCount = async () => (await env.DB.prepare('SELECT count(*) AS n FROM query_log').first<{ n: number }>())?.n ?? 0;
    const [runs, logs] = [await runsLeft(), await logCount()];
    await search('brand', 'orders revenue');
    await fetchItem('brand', 'table:brand_acme:fact__orders');
    expect(await logCount()).toBe(logs);
    expect(await runsLeft()).toBe(runs);
  });

  it('refuses arguments outside its schema; a query of only common words finds nothing', async () => {
    const raw = await clients.brand.callTool({ name: 'search', arguments: { query: 'x', limit: 5 } });
    expect(raw.isError).toBe(true);
    expect(await search('brand', 'the of and')).toEqual([]);
  });
});

describe('fetch', () => {
  it("a report: its instructions and every section's name, description and SQL", async () => {
    const item = await fetchItem('org', 'report:rpt_business_overview');
    const detail = z
      .object({ instructions: z.string() })
      .parse((await api('/v1/data/reports/rpt_business_overview?brandId=brand_acme', 'org')).body);
    const { queries } = z
      .object({ queries: z.array(z.object({ id: z.string(), name: z.string(), description: z.string().nullable() })) })
      .parse((await api('/v1/data/reports/rpt_business_overview/queries?brandId=brand_acme', 'org')).body);
    expect(item.metadata?.kind).toBe('report');
    expect(item.text).toContain(`Instructions:\n${detail.instructions}`);
    expect(queries.length).toBeGreaterThan(1);
    for (const q of queries) {
      expect(item.text).toContain(`${q.name} (queryId ${q.id})`);
      if (q.description) expect(item.text).toContain(q.description);
    }
    expect(item.text.match(/\nSQL:\n/g)).toHaveLength(queries.length);
  });

  it('a table: exactly what describe_table returns', async () => {
    const item = await fetchItem('brand', 'table:brand_acme:fact__orders');
    const described = texts(
      await clients.brand.callTool({ name: 'describe_table', arguments: { brandId: 'brand_acme', table: 'fact__orders' } }),
    );
    expect(JSON.parse(item.text)).toEqual(JSON.parse(described[0] ?? ''));
    expect(item.url).toMatch(/\/admin\/search\/table:brand_acme:fact__orders$/);
    expect(item.text).toContain('mem_demo_orders_revenue');
  });

  it('a memory, and a brand with its tables', async () => {
    const memory = await fetchItem('brand', 'memory:mem_demo_acme_orders_size');
    expect(memory.text).toContain('500,000 orders');
    expect(memory.metadata).toMatchObject({ kind: 'memory', scope: 'brand', brandId: 'brand_acme', table: 'fact__orders' });
    // Who wrote it and when, as list_memories says it: a citation of a memory says where it came from.
    expect(memory.metadata?.by).toMatch(/\S/);
    expect(memory.metadata?.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const brand = await fetchItem('brand', 'brand:brand_acme');
    expect(brand.text).toContain('fact__orders');
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
      ['brand', 'section:rpt_globex_stores:rq_globex_store_daily'],
      ['org', 'report:rpt_business_overview:extra'],
      ['org', 'memory:mem_nope'],
      ['org', 'nonsense'],
    ] as const) {
      expect((await fetchError(key, id)).code, `${key} ${id}`).toMatch(/NOT_FOUND|FORBIDDEN_BRAND/);
    }
  });
});
