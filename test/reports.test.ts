import { beforeAll, describe, expect, it } from 'vitest';
import { QueryListSchema, ReportDetailSchema, ReportListSchema, type Report } from '../src/schemas/catalog';
import { api, expectError, postJson, seedDemo, type TestKey } from './seed';

beforeAll(async () => {
  await seedDemo();
});

/** What each demo key must see, in the listing's order (brandId, then system < org < brand, then reportId). */
const EXPECTED: Record<TestKey, [brandId: string, reportId: string, type: Report['type']][]> = {
  org: [
    ['brand_acme', 'rpt_business_overview', 'system'],
    ['brand_acme', 'rpt_demo_channel_mix', 'org'],
    ['brand_acme', 'rpt_demo_customer_health', 'org'],
    ['brand_acme', 'rpt_acme_trading', 'brand'],
    ['brand_globex', 'rpt_business_overview', 'system'],
    ['brand_globex', 'rpt_demo_channel_mix', 'org'],
    ['brand_globex', 'rpt_demo_customer_health', 'org'],
    ['brand_globex', 'rpt_globex_stores', 'brand'],
    ['brand_initech', 'rpt_business_overview', 'system'],
    ['brand_initech', 'rpt_demo_channel_mix', 'org'],
    ['brand_initech', 'rpt_demo_customer_health', 'org'],
  ],
  brand: [
    ['brand_acme', 'rpt_business_overview', 'system'],
    ['brand_acme', 'rpt_demo_channel_mix', 'org'],
    ['brand_acme', 'rpt_demo_customer_health', 'org'],
    ['brand_acme', 'rpt_acme_trading', 'brand'],
  ],
  other: [
    ['brand_umbrella', 'rpt_business_overview', 'system'],
    ['brand_umbrella', 'rpt_other_portfolio', 'org'],
    ['brand_umbrella', 'rpt_umbrella_clinics', 'brand'],
  ],
};

const QUERY_COUNT: Record<string, number> = {
  rpt_business_overview: 4,
  rpt_demo_channel_mix: 2,
  rpt_demo_customer_health: 2,
  rpt_acme_trading: 3,
  rpt_globex_stores: 1,
  rpt_other_portfolio: 1,
  rpt_umbrella_clinics: 1,
};

const triple = (r: Report) => [r.brandId, r.reportId, r.type];

async function listPage(key: TestKey, params: Record<string, string>) {
  const res = await api(`/v1/data/reports?${new URLSearchParams(params)}`, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  return ReportListSchema.parse(res.body);
}

/** Follows nextCursor to the end; returns every page. */
async function walk(key: TestKey, params: Record<string, string>) {
  const pages = [];
  let cursor: string | null = null;
  do {
    const page = await listPage(key, cursor === null ? params : { ...params, cursor });
    pages.push(page);
    cursor = page.nextCursor;
    expect(pages.length).toBeLessThan(50);
  } while (cursor !== null);
  return pages;
}

describe('GET /v1/data/reports', () => {
  it.each(['org', 'brand', 'other'] as const)('lists exactly what the %s key can see, in a stable order, with spec fields', async (key) => {
    const res = await api('/v1/data/reports', key);
    expect(res.status).toBe(200);
    const page = ReportListSchema.parse(res.body);
    expect(page.reports.map(triple)).toEqual(EXPECTED[key]);
    expect(page).toMatchObject({ nextCursor: null, hasMore: false });
    for (const r of page.reports) {
      expect(Object.keys(r).sort()).toEqual(['brandId', 'description', 'name', 'queryCount', 'reportId', 'runnable', 'type']);
      expect(r.queryCount).toBe(QUERY_COUNT[r.reportId]);
      // Initech has no dataset yet: its reports are listed, flagged as not runnable.
      expect(r.runnable, `${r.brandId} ${r.reportId}`).toBe(r.brandId !== 'brand_initech');
    }
  });

  it('shows a system report once per reachable brand, with that brand as brandId', async () => {
    const page = await listPage('org', { type: 'system' });
    expect(page.reports).toEqual(
      ['brand_acme', 'brand_globex', 'brand_initech'].map((brandId) => ({
        reportId: 'rpt_business_overview',
        brandId,
        name: 'Business Overview',
        description: 'Headline sales KPIs, channel mix, daily trend and top products for the period.',
        queryCount: 4,
        type: 'system',
        runnable: brandId !== 'brand_initech',
      })),
    );
  });

  it('flags the reports of a brand without a dataset as not runnable, and running them is what the flag says: 409', async () => {
    const page = await listPage('org', { brandId: 'brand_initech' });
    expect(page.reports.map((r) => [r.reportId, r.runnable])).toEqual([
      ['rpt_business_overview', false],
      ['rpt_demo_channel_mix', false],
      ['rpt_demo_customer_health', false],
    ]);
    const detail = ReportDetailSchema.parse((await api('/v1/data/reports/rpt_business_overview?brandId=brand_initech', 'org')).body);
    expect(detail.runnable).toBe(false);
    const sections = QueryListSchema.parse((await api('/v1/data/reports/rpt_business_overview/queries?brandId=brand_initech', 'org')).body);
    const first = sections.queries[0];
    if (!first) throw new Error('the report has no sections');
    expectError(
      await postJson('/v1/data/query', 'org', { queryId: first.id, brandId: 'brand_initech', dryRun: true }),
      409,
      'BRAND_NOT_PROVISIONED',
    );
    // The same report through a provisioned brand is runnable, and does run.
    const acme = await listPage('org', { brandId: 'brand_acme', type: 'system' });
    expect(acme.reports.map((r) => r.runnable)).toEqual([true]);
    expect((await postJson('/v1/data/query', 'org', { queryId: first.id, brandId: 'brand_acme', dryRun: true })).status).toBe(200);
  });

  it('keeps a null description null', async () => {
    const page = await listPage('other', { type: 'brand' });
    expect(page.reports).toEqual([
      {
        reportId: 'rpt_umbrella_clinics',
        brandId: 'brand_umbrella',
        name: 'Umbrella Clinic Sales',
        description: 'Revenue by channel for Umbrella Health.',
        queryCount: 1,
        type: 'brand',
        runnable: true,
      },
    ]);
    const org = await listPage('other', { type: 'org' });
    expect(org.reports.map(triple)).toEqual([['brand_umbrella', 'rpt_other_portfolio', 'org']]);
  });

  it.each([
    ['type=org', { type: 'org' }, EXPECTED.org.filter((r) => r[2] === 'org')],
    ['type=brand', { type: 'brand' }, EXPECTED.org.filter((r) => r[2] === 'brand')],
    ['brandId=brand_globex', { brandId: 'brand_globex' }, EXPECTED.org.filter((r) => r[0] === 'brand_globex')],
    ['brandId=brand_initech&type=brand', { brandId: 'brand_initech', type: 'brand' }, []],
  ])('filters for the org key: %s', async (_name, params, expected) => {
    const page = await listPage('org', params);
    expect(page.reports.map(triple)).toEqual(expected);
  });

  it('lets the brand key name its own brand', async () => {
    const page = await listPage('brand', { brandId: 'brand_acme', type: 'brand' });
    expect(page.reports.map(triple)).toEqual([['brand_acme', 'rpt_acme_trading', 'brand']]);
  });

  describe('paging', () => {
    it.each([1, 2, 3])('limit=%i walks every report exactly once, in order', async (limit) => {
      const pages = await walk('org', { limit: String(limit) });
      expect(pages).toHaveLength(Math.ceil(EXPECTED.org.length / limit));
      for (const [i, p] of pages.entries()) {
        const last = i === pages.length - 1;
        expect(p.reports.length).toBe(last ? EXPECTED.org.length - limit * i : limit);
        expect(p.hasMore).toBe(!last);
        expect(p.nextCursor === null).toBe(last);
      }
      expect(pages.flatMap((p) => p.reports.map(triple))).toEqual(EXPECTED.org);
    });

    it.each([
      [{ type: 'org', limit: '2' }, EXPECTED.org.filter((r) => r[2] === 'org')],
      [{ brandId: 'brand_acme', limit: '1' }, EXPECTED.org.filter((r) => r[0] === 'brand_acme')],
      [{ brandId: 'brand_globex', type: 'system', limit: '1' }, [['brand_globex', 'rpt_business_overview', 'system']]],
    ])('walks with filters %j', async (params, expected) => {
      const pages = await walk('org', params);
      expect(pages.flatMap((p) => p.reports.map(triple))).toEqual(expected);
    });

    it('needs more than one page at limit=2 for org_demo, and the default limit fits all', async () => {
      const first = await listPage('org', { limit: '2' });
      expect(first.reports.map(triple)).toEqual(EXPECTED.org.slice(0, 2));
      expect(first.hasMore).toBe(true);
      expect(first.nextCursor).toEqual(expect.any(String));
      expect((await listPage('org', {})).reports).toHaveLength(EXPECTED.org.length);
    });

    it('accepts a different limit on a later page without skipping or repeating', async () => {
      const first = await listPage('org', { limit: '3' });
      const rest = await walk('org', { limit: '5', cursor: first.nextCursor ?? '' });
      expect([...first.reports, ...rest.flatMap((p) => p.reports)].map(triple)).toEqual(EXPECTED.org);
    });

    it('accepts limit=200 and limit=1 (the bounds)', async () => {
      expect((await listPage('org', { limit: '200' })).reports).toHaveLength(EXPECTED.org.length);
      expect((await listPage('org', { limit: '1' })).reports).toHaveLength(1);
    });
  });

  describe('invalid limit and cursor are 400 VALIDATION naming the parameter', () => {
    it.each(['0', '201', '-1', '1.5', 'abc', '', '10abc'])('limit=%j', async (limit) => {
      const res = await api(`/v1/data/reports?limit=${encodeURIComponent(limit)}`, 'org');
      const err = expectError(res, 400, 'VALIDATION');
      expect(err.message).toMatch(/limit/);
      expect(err.message).toMatch(/1 to 200/);
      expect(err.details).toMatchObject({ in: 'query', issues: [{ path: 'limit' }] });
    });

    // Number() reads all of these as numbers (10, 16, 5, 1, 5, 5, 1); a query parameter takes digits only.
    it.each(['1e1', '0x10', '+5', '1.0', ' 5', '5 ', '0b1', 'Infinity', '\u0661\u0660', '5%00'])(
      'strict integer: limit=%j',
      async (limit) => {
        const res = await api(`/v1/data/reports?limit=${encodeURIComponent(limit)}`, 'org');
        const err = expectError(res, 400, 'VALIDATION');
        expect(err.message).toBe('invalid query parameter limit: limit must be an integer from 1 to 200, written with digits only');
        expect(err.details).toMatchObject({ in: 'query', issues: [{ path: 'limit' }] });
      },
    );

    it.each([
      ['10', 10],
      ['010', 10],
      ['200', EXPECTED.org.length],
    ])('digits only are fine: limit=%j', async (limit, rows) => {
      expect((await listPage('org', { limit })).reports).toHaveLength(Math.min(rows, EXPECTED.org.length));
    });

    it('an unknown type value', async () => {
      const err = expectError(await api('/v1/data/reports?type=public', 'org'), 400, 'VALIDATION');
      expect(err.message).toMatch(/type/);
    });

    async function firstCursor(key: TestKey, params: Record<string, string> = {}) {
      const page = await listPage(key, { limit: '2', ...params });
      if (page.nextCursor === null) throw new Error('expected a second page');
      return page.nextCursor;
    }

    async function expectCursorRejected(key: TestKey, params: Record<string, string>) {
      const err = expectError(await api(`/v1/data/reports?${new URLSearchParams(params)}`, key), 400, 'VALIDATION');
      expect(err.message).toMatch(/cursor/);
      expect(err.details).toMatchObject({ in: 'query', issues: [{ path: 'cursor' }] });
    }

    it('garbage, empty and oversized cursors', async () => {
      await expectCursorRejected('org', { cursor: 'not-a-cursor' });
      await expectCursorRejected('org', { cursor: '' });
      await expectCursorRejected('org', { cursor: 'a.b' });
      await expectCursorRejected('org', { cursor: 'x'.repeat(5000) });
    });

    it('a tampered cursor (payload edited to skip ahead, signature kept)', async () => {
      const cursor = await firstCursor('org');
      const [payload, mac] = cursor.split('.');
      const decoded = JSON.parse(atob((payload ?? '').replace(/-/g, '+').replace(/_/g, '/')));
      decoded.pos = ['brand_initech', 0, ''];
      const forged = btoa(JSON.stringify(decoded)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
      await expectCursorRejected('org', { cursor: `${forged}.${mac}` });
      // A flipped signature character.
      const flipped = cursor.slice(0, -1) + (cursor.endsWith('A') ? 'B' : 'A');
      await expectCursorRejected('org', { cursor: flipped });
    });

    it('a cursor replayed with other filters', async () => {
      const cursor = await firstCursor('org');
      await expectCursorRejected('org', { cursor, type: 'org' });
      await expectCursorRejected('org', { cursor, brandId: 'brand_acme' });
      const narrowed = await firstCursor('org', { brandId: 'brand_acme' });
      await expectCursorRejected('org', { cursor: narrowed });
      await expectCursorRejected('org', { cursor: narrowed, brandId: 'brand_globex' });
    });

    it('a cursor replayed with another key', async () => {
      const cursor = await firstCursor('org', { brandId: 'brand_acme' });
      await expectCursorRejected('brand', { cursor, brandId: 'brand_acme' });
      await expectCursorRejected('other', { cursor });
    });

    it('the same cursor still works for its own key and filters', async () => {
      const cursor = await firstCursor('org', { brandId: 'brand_acme' });
      const next = await listPage('org', { brandId: 'brand_acme', limit: '2', cursor });
      expect(next.reports.map(triple)).toEqual(EXPECTED.org.slice(2, 4));
      expect(next.nextCursor).toBeNull();
    });
  });

  it('403 FORBIDDEN_BRAND for a brand outside the key (including unknown ids)', async () => {
    for (const [key, brandId] of [
      ['org', 'brand_umbrella'],
      ['brand', 'brand_globex'],
      ['other', 'brand_acme'],
      ['org', 'brand_does_not_exist'],
    ] as const) {
      const err = expectError(await api(`/v1/data/reports?brandId=${brandId}`, key), 403, 'FORBIDDEN_BRAND');
      expect(err.message).toContain(brandId);
    }
  });

  it('401 UNAUTHORIZED without a key or with an unknown key', async () => {
    expectError(await api('/v1/data/reports', null), 401, 'UNAUTHORIZED');
    const res = await api('/v1/data/reports', null, { headers: { authorization: 'Bearer wqk_unknownunknownunknownunknown00' } });
    expectError(res, 401, 'UNAUTHORIZED');
  });
});

describe('GET /v1/data/reports/{reportId}', () => {
  it('returns a system report with instructions and parsed dashboardConfig, through the named brand', async () => {
    const res = await api('/v1/data/reports/rpt_business_overview?brandId=brand_globex', 'org');
    expect(res.status).toBe(200);
    const detail = ReportDetailSchema.parse(res.body);
    expect(Object.keys(detail).sort()).toEqual(
      ['brandId', 'dashboardConfig', 'description', 'instructions', 'name', 'queryCount', 'reportId', 'runnable', 'type'].sort(),
    );
    expect(detail).toMatchObject({ reportId: 'rpt_business_overview', brandId: 'brand_globex', type: 'system', queryCount: 4 });
    expect(detail.instructions).toMatch(/^## Business Overview/);
    expect(detail.dashboardConfig).toMatchObject({
      layout: 'grid',
      tiles: expect.arrayContaining([{ queryId: 'rq_overview_kpis', kind: 'kpi', span: 2 }]),
    });
  });

  it('returns null instructions and dashboardConfig when the report has none', async () => {
    const res = await api('/v1/data/reports/rpt_demo_customer_health?brandId=brand_initech', 'org');
    expect(res.body).toEqual({
      reportId: 'rpt_demo_customer_health',
      brandId: 'brand_initech',
      name: 'Customer Health',
      description: 'New customers and repeat buying.',
      queryCount: 2,
      type: 'org',
      runnable: false,
      instructions: null,
      dashboardConfig: null,
    });
  });

  it('infers the brand of a brand report for an org key, and of anything for a brand key', async () => {
    const own = ReportDetailSchema.parse((await api('/v1/data/reports/rpt_acme_trading', 'org')).body);
    expect(own).toMatchObject({ brandId: 'brand_acme', type: 'brand' });
    const shared = ReportDetailSchema.parse((await api('/v1/data/reports/rpt_business_overview', 'brand')).body);
    expect(shared).toMatchObject({ brandId: 'brand_acme', type: 'system' });
  });

  it('400 VALIDATION naming brandId when an org key views a shared or org report without one', async () => {
    for (const id of ['rpt_business_overview', 'rpt_demo_channel_mix']) {
      const err = expectError(await api(`/v1/data/reports/${id}`, 'org'), 400, 'VALIDATION');
      expect(err.message).toMatch(/brandId/);
    }
  });

  it('404 REPORT_NOT_FOUND, never 403, for reports not visible to the brand', async () => {
    const cases: [TestKey, string][] = [
      ['org', '/v1/data/reports/rpt_no_such_report?brandId=brand_acme'],
      ['org', '/v1/data/reports/rpt_no_such_report'],
      ['other', '/v1/data/reports/rpt_acme_trading'],
      ['other', '/v1/data/reports/rpt_demo_channel_mix'],
      ['other', '/v1/data/reports/rpt_demo_channel_mix?brandId=brand_umbrella'],
      ['brand', '/v1/data/reports/rpt_globex_stores'],
      ['org', '/v1/data/reports/rpt_acme_trading?brandId=brand_globex'],
      ['org', '/v1/data/reports/rpt_other_portfolio?brandId=brand_acme'],
      ['org', '/v1/data/reports/rpt_other_portfolio'],
    ];
    for (const [key, path] of cases) {
      const err = expectError(await api(path, key), 404, 'REPORT_NOT_FOUND');
      expect(err.message).toMatch(/not visible|does not exist/);
    }
  });

  it('403 FORBIDDEN_BRAND for a brandId outside the key, whether or not the report exists', async () => {
    expectError(await api('/v1/data/reports/rpt_business_overview?brandId=brand_umbrella', 'org'), 403, 'FORBIDDEN_BRAND');
    expectError(await api('/v1/data/reports/rpt_no_such_report?brandId=brand_umbrella', 'org'), 403, 'FORBIDDEN_BRAND');
  });
});

describe('GET /v1/data/reports/{reportId}/queries', () => {
  it('lists the sections in ordinal order with the template, slots and hints', async () => {
    const res = await api('/v1/data/reports/rpt_business_overview/queries?brandId=brand_acme', 'org');
    expect(res.status).toBe(200);
    const { queries } = QueryListSchema.parse(res.body);
    expect(queries.map((q) => [q.id, q.ordinal])).toEqual([
      ['rq_overview_kpis', 1],
      ['rq_overview_channels', 2],
      ['rq_overview_daily', 3],
      ['rq_overview_top_products', 4],
    ]);
    for (const q of queries) {
      expect(q.tables).toBeNull();
      expect(q.parameterized).toBe(true);
      expect(q.parameters).toEqual(['dataset', 'start_date', 'end_date']);
      expect(q.sql).toContain('`service-v1.{dataset}.');
      expect(q.sql).toContain("DATE '{start_date}'");
    }
    expect(queries[1]).toMatchObject({
      name: 'Revenue by channel',
      description: 'Orders and revenue per sales channel.',
      narrativeHints: 'Name the leading channel and its share of revenue.',
      chartSpec: { type: 'bar', x: 'channel', y: 'revenue' },
    });
    // chartSpec only when set; narrativeHints null when unset.
    expect(queries[3]).not.toHaveProperty('chartSpec');
    expect(queries[3]).toHaveProperty('narrativeHints', null);
  });

  it('reports a section without slots as not parameterized', async () => {
    const { queries } = QueryListSchema.parse((await api('/v1/data/reports/rpt_acme_trading/queries', 'brand')).body);
    expect(queries.map((q) => [q.id, q.parameterized, q.parameters])).toEqual([
      ['rq_acme_countries', true, ['dataset', 'start_date', 'end_date']],
      ['rq_acme_web_events', true, ['dataset', 'start_date', 'end_date']],
      ['rq_acme_range', false, []],
    ]);
  });

  it('uses the same visibility rules as the report itself', async () => {
    expectError(await api('/v1/data/reports/rpt_acme_trading/queries', 'other'), 404, 'REPORT_NOT_FOUND');
    expectError(await api('/v1/data/reports/rpt_no_such_report/queries', 'brand'), 404, 'REPORT_NOT_FOUND');
    expectError(await api('/v1/data/reports/rpt_demo_channel_mix/queries', 'org'), 400, 'VALIDATION');
    expectError(await api('/v1/data/reports/rpt_demo_channel_mix/queries?brandId=brand_umbrella', 'org'), 403, 'FORBIDDEN_BRAND');
    expectError(await api('/v1/data/reports/rpt_demo_channel_mix/queries', null), 401, 'UNAUTHORIZED');
  });
});
