import { beforeAll, describe, expect, it } from 'vitest';
import { QueryListSchema, ReportDetailSchema, ReportListSchema } from '../src/schemas/catalog';
import { z } from 'zod';
import { appliesTo, BRANDS, KEY_BRANDS, KEYS, reachingBrands, type Owned } from './demo-model';
import { api, expectError, postJson, seedDemo } from './seed';

/**
 * Every endpoint, with the org key (org_demo), the brand key (brand_acme) and the other org's key (org_other),
 * against every demo brand and every demo report. The expectations come from the model in demo-model.ts and the
 * demo reports and queries below, written independently of the SQL that implements the rules.
 */
type ReportModel = Owned & { id: string };
const REPORTS: ReportModel[] = [
  { id: 'rpt_business_overview', scope: 'system' },
  { id: 'rpt_demo_channel_mix', scope: 'org', org: 'org_demo' },
  { id: 'rpt_demo_customer_health', scope: 'org', org: 'org_demo' },
  { id: 'rpt_other_portfolio', scope: 'org', org: 'org_other' },
  { id: 'rpt_acme_trading', scope: 'brand', brand: 'brand_acme' },
  { id: 'rpt_globex_stores', scope: 'brand', brand: 'brand_globex' },
  { id: 'rpt_umbrella_clinics', scope: 'brand', brand: 'brand_umbrella' },
];
const SAVED_QUERY_BRANDS: Record<string, number> = { brand_acme: 3, brand_globex: 2, brand_initech: 0, brand_umbrella: 2 };
const DATASET: Record<string, string | null> = {
  brand_acme: 'acme',
  brand_globex: 'globex',
  brand_initech: null,
  brand_umbrella: 'umbrella',
};
/** One saved query and one section of a brand-owned report per brand that has them. */
const OWNED_QUERIES: [queryId: string, owner: string][] = [
  ['sq_acme_monthly_kpis', 'brand_acme'],
  ['sq_globex_monthly_kpis', 'brand_globex'],
  ['sq_umbrella_monthly_kpis', 'brand_umbrella'],
  ['rq_acme_countries', 'brand_acme'],
  ['rq_globex_store_daily', 'brand_globex'],
  ['rq_umbrella_channels', 'brand_umbrella'],
];
const RunResponseSchema = z.object({ brandId: z.string(), rowCount: z.number(), stats: z.object({ dryRun: z.boolean() }) });

const cross = <A, B>(as: A[], bs: B[]) => as.flatMap((a) => bs.map((b) => [a, b] as [A, B]));

beforeAll(async () => {
  await seedDemo();
});

describe('scoping matrix', () => {
  it.each(KEYS)('listBrands for the %s key', async (key) => {
    const res = await api('/v1/data/brands', key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ brands: KEY_BRANDS[key].map((brandId) => ({ brandId })) });
  });

  describe.each(KEYS)('%s key', (key) => {
    const inScope = (brand: string) => KEY_BRANDS[key].includes(brand);

    it.each(BRANDS)('listReports?brandId=%s', async (brand) => {
      const res = await api(`/v1/data/reports?brandId=${brand}`, key);
      if (!inScope(brand)) return void expectError(res, 403, 'FORBIDDEN_BRAND');
      const page = ReportListSchema.parse(res.body);
      expect(page.reports.map((r) => r.reportId).sort()).toEqual(
        REPORTS.filter((r) => appliesTo(r, brand))
          .map((r) => r.id)
          .sort(),
      );
      expect(page.reports.every((r) => r.brandId === brand)).toBe(true);
    });

    it("listReports without brandId covers exactly the key's brands", async () => {
      const page = ReportListSchema.parse((await api('/v1/data/reports', key)).body);
      const expected = KEY_BRANDS[key].flatMap((b) => REPORTS.filter((r) => appliesTo(r, b)).map((r) => `${b}/${r.id}`));
      expect(page.reports.map((r) => `${r.brandId}/${r.reportId}`).sort()).toEqual(expected.sort());
    });

    it.each(BRANDS)('listSavedQueries?brandId=%s', async (brand) => {
      const res = await api(`/v1/data/queries?brandId=${brand}`, key);
      if (!inScope(brand)) return void expectError(res, 403, 'FORBIDDEN_BRAND');
      const { queries } = QueryListSchema.parse(res.body);
      expect(queries).toHaveLength(SAVED_QUERY_BRANDS[brand] ?? -1);
    });

    it.each(BRANDS)('submitFeedback with brandId=%s', async (brand) => {
      const res = await postJson('/v1/data/feedback', key, { summary: `matrix ${key} ${brand}`, brandId: brand });
      if (!inScope(brand)) return void expectError(res, 403, 'FORBIDDEN_BRAND');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ feedbackRef: expect.stringMatching(/^fb_/), attached: { queries: expect.any(Array), turns: 0 } });
    });

    it.each(BRANDS)('runQuery (raw SQL, dry run) with brandId=%s', async (brand) => {
      const dataset = DATASET[brand] ?? 'acme';
      const res = await postJson('/v1/data/query', key, {
        sql: `SELECT channel, COUNT(*) AS n FROM \`service-v1.${dataset}.fact__orders\` GROUP BY channel`,
        brandId: brand,
        dryRun: true,
      });
      if (!inScope(brand)) return void expectError(res, 403, 'FORBIDDEN_BRAND');
      if (DATASET[brand] === null) return void expectError(res, 409, 'BRAND_NOT_PROVISIONED');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(RunResponseSchema.parse(res.body)).toMatchObject({ brandId: brand, rowCount: 0, stats: { dryRun: true } });
    });

    it('runQuery refuses a table of another tenant inside its own brand (403 FORBIDDEN_TABLE)', async () => {
      const own = KEY_BRANDS[key][0] ?? '';
      const foreign = key === 'other' ? 'acme' : 'umbrella';
      const res = await postJson('/v1/data/query', key, {
        sql: `SELECT * FROM \`service-v1.${foreign}.fact__orders\``,
        brandId: own,
        dryRun: true,
      });
      expectError(res, 403, 'FORBIDDEN_TABLE');
    });

    it.each(OWNED_QUERIES)('runQuery by queryId %s (owned by %s), brand inferred', async (queryId, owner) => {
      const res = await postJson('/v1/data/query', key, { queryId, dryRun: true });
      if (!inScope(owner)) return void expectError(res, 404, 'QUERY_NOT_FOUND');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(RunResponseSchema.parse(res.body)).toMatchObject({ brandId: owner, stats: { dryRun: true } });
    });

    it.each(cross(REPORTS, BRANDS).map(([r, b]) => [r.id, b, r] as const))(
      'getReport and listReportQueries %s through %s',
      async (reportId, brand, report) => {
        for (const path of [`/v1/data/reports/${reportId}?brandId=${brand}`, `/v1/data/reports/${reportId}/queries?brandId=${brand}`]) {
          const res = await api(path, key);
          if (!inScope(brand)) expectError(res, 403, 'FORBIDDEN_BRAND');
          else if (!appliesTo(report, brand)) expectError(res, 404, 'REPORT_NOT_FOUND');
          else expect(res.status).toBe(200);
        }
      },
    );

    it.each(REPORTS.map((r) => [r.id, r] as const))('getReport and listReportQueries %s without brandId', async (reportId, report) => {
      const visibleVia = reachingBrands(key, report);
      for (const path of [`/v1/data/reports/${reportId}`, `/v1/data/reports/${reportId}/queries`]) {
        const res = await api(path, key);
        if (visibleVia.length === 0) {
          expectError(res, 404, 'REPORT_NOT_FOUND');
        } else if (report.scope === 'brand') {
          expect(res.status).toBe(200);
          if (!path.endsWith('/queries')) expect(ReportDetailSchema.parse(res.body).brandId).toBe(report.brand);
        } else if (KEY_BRANDS[key].length > 1) {
          // Credentials that reach several brands name one; one reachable brand is inferred (the else branch).
          expect(expectError(res, 400, 'VALIDATION').message).toMatch(/brandId/);
        } else {
          expect(res.status).toBe(200);
          if (!path.endsWith('/queries')) expect(ReportDetailSchema.parse(res.body).brandId).toBe(KEY_BRANDS[key][0]);
        }
      }
    });
  });
});
