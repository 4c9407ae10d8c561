import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ListBrandsOutput } from '../src/features/brands/brands.tools';
import { FeedbackResponseSchema } from '../src/features/feedback/feedback.schemas';
import { QueryListSchema, ReportDetailSchema, ReportListSchema } from '../src/schemas/catalog';
import { errorOf, mcpClientsPerKey, okData, textData, texts } from './mcp-client';
import { api, TEST_KEYS, type TestKey } from './seed';

// The tools' results are parsed with their own output schemas (okData's second argument), as REST bodies are.
const clients = mcpClientsPerKey(TEST_KEYS);

function call(key: TestKey, name: string, args: Record<string, unknown> = {}) {
  return clients[key].callTool({ name, arguments: args });
}

/** The REST body for the same operation, as the same key: MCP must return exactly this data. */
async function rest(key: TestKey, path: string): Promise<unknown> {
  const res = await api(path, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('list_brands', () => {
  it.each([
    ['org', ['brand_acme', 'brand_globex', 'brand_initech']],
    ['brand', ['brand_acme']],
    ['other', ['brand_umbrella']],
  ] as const)('%s key sees its brands, same as REST', async (key, ids) => {
    const data = okData(await call(key, 'list_brands'), ListBrandsOutput);
    expect(data).toEqual(await rest(key, '/v1/data/brands'));
    expect(data).toMatchObject({ brands: ids.map((brandId) => ({ brandId })) });
  });

  it('concurrent calls from three keys, interleaved, each see only their own brands (tool schemas are shared per isolate, the principal is not)', async () => {
    const expected: Record<TestKey, string[]> = {
      org: ['brand_acme', 'brand_globex', 'brand_initech'],
      brand: ['brand_acme'],
      other: ['brand_umbrella'],
    };
    const order: TestKey[] = Array.from({ length: 8 }, () => ['org', 'brand', 'other'] as const).flat();
    const results = await Promise.all(order.map(async (key) => ({ key, data: okData(await call(key, 'list_brands'), ListBrandsOutput) })));
    for (const { key, data } of results)
      expect(
        data.brands.map((b) => b.brandId),
        key,
      ).toEqual(expected[key]);
  });
});

describe('list_reports', () => {
  it.each(['org', 'brand', 'other'] as const)("%s key: same reports as REST, and no other tenant's", async (key) => {
    const data = okData(await call(key, 'list_reports', {}), ReportListSchema);
    expect(data).toEqual(await rest(key, '/v1/data/reports'));
    const { reports } = data;
    expect(reports.length).toBeGreaterThan(0);
    const own = key === 'org' ? ['brand_acme', 'brand_globex', 'brand_initech'] : key === 'brand' ? ['brand_acme'] : ['brand_umbrella'];
    for (const r of reports) expect(own).toContain(r.brandId);
  });

  it('pages with limit and cursor until nextCursor is null, visiting the REST list once', async () => {
    const all = (await rest('org', '/v1/data/reports?limit=200')) as { reports: unknown[] };
    const seen: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = okData(await call('org', 'list_reports', { limit: 2, ...(cursor ? { cursor } : {}) }), ReportListSchema);
      expect(page.reports.length).toBeLessThanOrEqual(2);
      expect(page.hasMore).toBe(page.nextCursor !== null);
      seen.push(...page.reports);
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor && pages < 50);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(all.reports);
  });

  it('filters by brand and type', async () => {
    const data = okData(await call('org', 'list_reports', { brandId: 'brand_globex', type: 'system' }), ReportListSchema);
    expect(data).toEqual(await rest('org', '/v1/data/reports?brandId=brand_globex&type=system'));
    const { reports } = data;
    expect(reports.length).toBeGreaterThan(0);
    for (const r of reports) expect(r).toMatchObject({ brandId: 'brand_globex', type: 'system' });
  });

  it.each([
    ['org', 'brand_umbrella'],
    ['brand', 'brand_globex'],
    ['other', 'brand_acme'],
    ['org', 'brand_does_not_exist'],
  ] as const)('%s key asking for %s: isError FORBIDDEN_BRAND', async (key, brandId) => {
    const error = errorOf(await call(key, 'list_reports', { brandId }));
    expect(error.code).toBe('FORBIDDEN_BRAND');
  });

  it('a cursor that was tampered with: isError VALIDATION (same as REST 400)', async () => {
    const first = okData(await call('org', 'list_reports', { limit: 1 }), ReportListSchema);
    const error = errorOf(await call('org', 'list_reports', { limit: 1, cursor: `${first.nextCursor}x` }));
    expect(error.code).toBe('VALIDATION');
  });

  it('an out-of-range limit is refused by the input schema, as a tool error the model can correct', async () => {
    const result = await call('org', 'list_reports', { limit: 0 });
    expect(result.isError).toBe(true);
    expect(texts(result).join('\n')).toMatch(/limit/);
  });
});

describe('get_report and list_report_queries', () => {
  it('org key: a shared report needs brandId (isError VALIDATION naming brandId)', async () => {
    for (const tool of ['get_report', 'list_report_queries']) {
      const error = errorOf(await call('org', tool, { reportId: 'rpt_business_overview' }));
      expect(error.code).toBe('VALIDATION');
      expect(error.message).toMatch(/brandId/);
    }
  });

  it.each([
    ['org', 'rpt_business_overview', 'brand_globex'],
    ['brand', 'rpt_business_overview', undefined],
    ['org', 'rpt_acme_trading', undefined],
    ['other', 'rpt_business_overview', 'brand_umbrella'],
  ] as const)('%s key, %s (brandId %s): same detail and sections as REST', async (key, reportId, brandId) => {
    const args = { reportId, ...(brandId ? { brandId } : {}) };
    const qs = brandId ? `?brandId=${brandId}` : '';
    const detail = ReportDetailSchema.parse(textData(await call(key, 'get_report', args)));
    expect(detail).toEqual(await rest(key, `/v1/data/reports/${reportId}${qs}`));
    expect(detail).toMatchObject({ reportId, instructions: expect.any(String) });
    const sections = okData(await call(key, 'list_report_queries', args), QueryListSchema);
    expect(sections).toEqual(await rest(key, `/v1/data/reports/${reportId}/queries${qs}`));
    const { queries } = sections;
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.map((q) => q.ordinal)).toEqual([...queries.map((q) => q.ordinal)].sort((a, b) => (a ?? 0) - (b ?? 0)));
  });

  it('the system report lists parameterized sections with their slots', async () => {
    const data = okData(await call('brand', 'list_report_queries', { reportId: 'rpt_business_overview' }), QueryListSchema);
    const { queries } = data;
    expect(queries.length).toBeGreaterThanOrEqual(3);
    for (const q of queries) {
      expect(q.parameterized).toBe(true);
      expect(q.parameters).toEqual(expect.arrayContaining(['dataset', 'start_date', 'end_date']));
      expect(q.sql).toContain('{dataset}');
      expect(q.tables).toBeNull();
    }
  });

  it.each([
    ['other', 'rpt_acme_trading', {}],
    ['brand', 'rpt_globex_stores', {}],
    ['org', 'rpt_nope', { brandId: 'brand_acme' }],
    ['brand', 'rpt_other_portfolio', {}],
  ] as const)('%s key, %s: isError REPORT_NOT_FOUND (never leaks other tenants)', async (key, reportId, extra) => {
    for (const tool of ['get_report', 'list_report_queries']) {
      const error = errorOf(await call(key, tool, { reportId, ...extra }));
      expect(error.code).toBe('REPORT_NOT_FOUND');
    }
  });

  it('a brand outside the key: isError FORBIDDEN_BRAND', async () => {
    const error = errorOf(await call('brand', 'get_report', { reportId: 'rpt_business_overview', brandId: 'brand_umbrella' }));
    expect(error.code).toBe('FORBIDDEN_BRAND');
  });
});

describe('list_saved_queries', () => {
  it.each([
    ['brand', undefined],
    ['org', 'brand_globex'],
    ['org', undefined],
    ['other', undefined],
  ] as const)('%s key (brandId %s): same queries as REST, concrete SQL, no parameters', async (key, brandId) => {
    const data = okData(await call(key, 'list_saved_queries', brandId ? { brandId } : {}), QueryListSchema);
    expect(data).toEqual(await rest(key, `/v1/data/queries${brandId ? `?brandId=${brandId}` : ''}`));
    const { queries } = data;
    expect(queries.length).toBeGreaterThanOrEqual(2);
    for (const q of queries) {
      expect(q).toMatchObject({ parameterized: false, parameters: [] });
      expect(q.sql).not.toContain('{');
    }
  });

  it('a brand outside the key: isError FORBIDDEN_BRAND', async () => {
    expect(errorOf(await call('other', 'list_saved_queries', { brandId: 'brand_acme' })).code).toBe('FORBIDDEN_BRAND');
  });
});

describe('report_data_issue', () => {
  it('files a report with the given fields and the MCP request id, and returns its feedbackRef', async () => {
    const args = {
      summary: 'Revenue for May looks doubled',
      brandId: 'brand_globex',
      expected: 'about 1.2M',
      observed: '2.4M',
      severity: 'high',
      transcript: [
        { role: 'user', content: 'What was May revenue?' },
        { role: 'assistant', content: 'It was 2.4M.' },
      ],
    };
    const data = okData(await call('org', 'report_data_issue', args), FeedbackResponseSchema);
    // What it attached is in the answer (the runs: test/feedback.test.ts).
    expect(data).toEqual({ feedbackRef: expect.stringMatching(/^fb_/), attached: { queries: expect.any(Array), turns: 2 } });
    expect(texts(await call('org', 'report_data_issue', { ...args, transcript: undefined }))[0]).toMatch(
      /^Filed fb_\w+ \(quote it in support\)\. Attached: \d+ recent quer(y|ies) and 0 transcript turns\./,
    );
    const row = await env.DB.prepare('SELECT * FROM feedback WHERE id = ?').bind(data.feedbackRef).first();
    expect(row).toMatchObject({
      principal_kind: 'key',
      principal_id: 'key_demo_org',
      org_id: 'org_demo',
      brand_id: 'brand_globex',
      summary: args.summary,
      expected: args.expected,
      observed: args.observed,
      severity: 'high',
      request_id: expect.stringMatching(/^req_/),
    });
    expect(JSON.parse(String(row?.transcript))).toEqual(args.transcript);
  });

  it('a brand key files against its own brand by default', async () => {
    const data = okData(await call('brand', 'report_data_issue', { summary: 'Missing store orders' }), FeedbackResponseSchema);
    const row = await env.DB.prepare('SELECT brand_id, principal_id FROM feedback WHERE id = ?').bind(data.feedbackRef).first();
    expect(row).toEqual({ brand_id: 'brand_acme', principal_id: 'key_demo_brand' });
  });

  it('a brand outside the key: isError FORBIDDEN_BRAND and nothing stored', async () => {
    const before = await env.DB.prepare('SELECT count(*) AS n FROM feedback').first<{ n: number }>();
    expect(errorOf(await call('other', 'report_data_issue', { summary: 'x', brandId: 'brand_acme' })).code).toBe('FORBIDDEN_BRAND');
    const after = await env.DB.prepare('SELECT count(*) AS n FROM feedback').first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });

  it('an empty summary is refused by the input schema', async () => {
    const result = await call('brand', 'report_data_issue', { summary: '' });
    expect(result.isError).toBe(true);
    expect(texts(result).join('\n')).toMatch(/summary/);
  });
});
