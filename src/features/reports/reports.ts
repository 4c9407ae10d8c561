import { z } from 'zod';
import { usageKey } from '../../auth/principal';
import { brandsReportAppliesTo, catalogSnapshot, hasDataset, reportAppliesTo, type CatalogSnapshot } from '../../catalog/snapshot';
import { requireSecret } from '../../env';
import { ApiError } from '../../errors';
import { keysetPage, openCursor } from '../../http/cursor';
import { storedQueryParameters } from '../../catalog/template';
import {
  JsonValueSchema,
  ReportTypeSchema,
  type JsonValue,
  type Query,
  type Report,
  type ReportDetail,
  type ReportType,
} from '../../schemas/catalog';
import type { OpContext } from '../../context';
import { listingBrands, resolveBrand } from '../../auth/scope';

/** Page size of listReports: default and inclusive bounds (spec: 1 to 200, default 50). */
export const REPORTS_PAGE = { default: 50, min: 1, max: 200 } as const;

/** Position in the listing's total order (brandId, type rank, reportId); system < org < brand. */
const TYPE_RANK: Record<ReportType, number> = { system: 0, org: 1, brand: 2 };
const PositionSchema = z.tuple([z.string(), z.number().int(), z.string()]);

interface ListReportsInput {
  brandId?: string;
  type?: ReportType;
  limit?: number;
  cursor?: string;
}

type Position = z.infer<typeof PositionSchema>;

function comparePosition(a: Position, b: Position): number {
  for (let i = 0; i < 3; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}

/**
 * The listing's rows after `after`, in (brandId, type rank, reportId) order, at most `take` of them. Pure: works
 * on the catalog snapshot. `system` reports apply to every brand, `org` reports to the brands of their org,
 * `brand` reports to their own brand.
 */
function visibleReports(
  snapshot: CatalogSnapshot,
  brandIds: readonly string[],
  type: ReportType | null,
  after: Position,
  take: number,
): Report[] {
  const rows: { pos: Position; row: Report }[] = [];
  for (const brandId of brandIds) {
    const brand = snapshot.brands.get(brandId);
    if (!brand) continue;
    for (const r of snapshot.reports) {
      if (type !== null && r.type !== type) continue;
      if (!reportAppliesTo(r, brand)) continue;
      const pos: Position = [brand.id, TYPE_RANK[r.type], r.id];
      if (comparePosition(pos, after) <= 0) continue;
      rows.push({
        pos,
        row: {
          brandId: brand.id,
          reportId: r.id,
          name: r.name,
          description: r.description,
          queryCount: r.queryCount,
          type: r.type,
          // Sections resolve against the brand's dataset, so without one (not provisioned yet) a report can only
          // answer 409 BRAND_NOT_PROVISIONED; listed anyway, flagged, so the listing is the catalog the brand will have.
          runnable: hasDataset(brand),
        },
      });
    }
  }
  rows.sort((x, y) => comparePosition(x.pos, y.pos));
  return rows.slice(0, take).map((x) => x.row);
}

/**
 * listReports: every report the principal can see, once per brand it applies to: `system` reports for each
 * reachable brand, `org` reports for each reachable brand of that org, `brand` reports for their own brand.
 * Ordered by (brandId, type rank, reportId) and paged by keyset, so a walk returns each row exactly once.
 */
export async function listReports(
  ctx: OpContext,
  input: ListReportsInput,
): Promise<{ reports: Report[]; nextCursor: string | null; hasMore: boolean }> {
  // `limit` is within REPORTS_PAGE: the REST route and the MCP tool validate it with the shared field schemas.
  const limit = input.limit ?? REPORTS_PAGE.default;
  const { brand, brandIds } = listingBrands(ctx.principal, input.brandId);

  const secret = requireSecret(ctx.env, 'CURSOR_SECRET');
  const binding = { principal: usageKey(ctx.principal), filters: { brandId: brand, type: input.type ?? null, list: 'reports' } };
  const after: Position =
    input.cursor === undefined ? ['', -1, ''] : await openCursor(secret, input.cursor, binding, ctx.now, PositionSchema);

  const results = visibleReports(await catalogSnapshot(ctx.env, ctx.now), brandIds, input.type ?? null, after, limit + 1);
  const { page, nextCursor } = await keysetPage(results, limit, (r) => [r.brandId, TYPE_RANK[r.type], r.reportId], {
    secret,
    binding,
    now: ctx.now,
  });
  return { reports: page, nextCursor, hasMore: nextCursor !== null };
}

/** A stored report row, read fresh (instructions and dashboard config are not in the catalog snapshot). */
const ReportRowSchema = z.object({
  id: z.string(),
  type: ReportTypeSchema,
  org_id: z.string().nullable(),
  brand_id: z.string().nullable(),
  name: z.string(),
  description: z.string().nullable(),
  instructions: z.string().nullable(),
  dashboard_config: z.string().nullable(),
  query_count: z.number().int(),
});
type ReportRow = z.infer<typeof ReportRowSchema>;

const SectionRowSchema = z.object({
  id: z.string(),
  ordinal: z.number().int(),
  name: z.string().nullable(),
  description: z.string().nullable(),
  sql_template: z.string(),
  narrative_hints: z.string().nullable(),
  chart_spec: z.string().nullable(),
});

/** The report as the principal sees it through one brand. */
interface VisibleReport {
  row: ReportRow;
  brandId: string;
  /** See hasDataset (src/catalog/snapshot.ts). */
  runnable: boolean;
}

function reportNotFound(reportId: string): ApiError {
  return new ApiError('REPORT_NOT_FOUND', `report ${JSON.stringify(reportId)} does not exist or is not visible to this brand`, {
    details: { reportId },
  });
}

const REPORT_SQL = `SELECT r.id, r.type, r.org_id, r.brand_id, r.name, r.description, r.instructions, r.dashboard_config,
        (SELECT count(*) FROM report_queries q WHERE q.report_id = r.id) AS query_count
   FROM reports r WHERE r.id = ?1`;

/**
 * Decides which brand a report is viewed through, or throws:
 * - 403 FORBIDDEN_BRAND: `brandId` is outside the principal's scope (checked before the report is read, so it
 *   says nothing about the report);
 * - 404 REPORT_NOT_FOUND: no such report, or it applies to none of the principal's brands / not to `brandId`
 *   (never 403, so other tenants' reports do not leak their existence);
 * - 400 VALIDATION: an org principal viewing a `system` or `org` report without `brandId`.
 * `brand` reports infer their owning brand.
 */
function resolveVisibility(
  ctx: OpContext,
  snapshot: CatalogSnapshot,
  reportId: string,
  requested: string | null,
  row: ReportRow | null,
): VisibleReport {
  if (!row) throw reportNotFound(reportId);
  const visible = brandsReportAppliesTo(snapshot, { type: row.type, orgId: row.org_id, brandId: row.brand_id }, ctx.principal.brandIds);
  if (visible.length === 0) throw reportNotFound(reportId);
  let brandId: string;
  if (requested !== null) {
    brandId = requested;
  } else if (row.type === 'brand' && row.brand_id !== null) {
    brandId = row.brand_id;
  } else {
    brandId = resolveBrand(ctx.principal, undefined, { required: true, transport: ctx.transport });
  }
  if (!visible.includes(brandId)) throw reportNotFound(reportId);
  const brand = snapshot.brands.get(brandId);
  return { row, brandId, runnable: brand !== undefined && hasDataset(brand) };
}

function requestedBrand(ctx: OpContext, brandId: string | undefined): string | null {
  return brandId === undefined ? null : resolveBrand(ctx.principal, brandId, { required: true });
}

function parseJsonColumn(text: string | null): JsonValue {
  return text === null ? null : JsonValueSchema.parse(JSON.parse(text));
}

function toReport(v: VisibleReport): Report {
  return {
    reportId: v.row.id,
    brandId: v.brandId,
    name: v.row.name,
    description: v.row.description,
    queryCount: v.row.query_count,
    type: v.row.type,
    runnable: v.runnable,
  };
}

/** Reads a report and resolves the brand it is viewed through (see resolveVisibility for the errors). */
async function findVisibleReport(ctx: OpContext, input: { reportId: string; brandId?: string }): Promise<VisibleReport> {
  const requested = requestedBrand(ctx, input.brandId);
  const [row, snapshot] = await Promise.all([
    ctx.env.DB.prepare(REPORT_SQL).bind(input.reportId).first(),
    catalogSnapshot(ctx.env, ctx.now),
  ]);
  return resolveVisibility(ctx, snapshot, input.reportId, requested, row === null ? null : ReportRowSchema.parse(row));
}

/** getReport: one report with its instructions and dashboard config. */
export async function getReport(ctx: OpContext, input: { reportId: string; brandId?: string }): Promise<ReportDetail> {
  const v = await findVisibleReport(ctx, input);
  return { ...toReport(v), instructions: v.row.instructions, dashboardConfig: parseJsonColumn(v.row.dashboard_config) };
}

/** listReportQueries: a report's sections in `ordinal` order, as runnable templates. */
export async function listReportQueries(ctx: OpContext, input: { reportId: string; brandId?: string }): Promise<{ queries: Query[] }> {
  const requested = requestedBrand(ctx, input.brandId);
  // One round trip: the sections are read alongside the report and dropped if it is not visible.
  const [[report, sections], snapshot] = await Promise.all([
    ctx.env.DB.batch([
      ctx.env.DB.prepare(REPORT_SQL).bind(input.reportId),
      ctx.env.DB.prepare(
        `SELECT id, ordinal, name, description, sql_template, narrative_hints, chart_spec
           FROM report_queries WHERE report_id = ? ORDER BY ordinal, id`,
      ).bind(input.reportId),
    ]),
    catalogSnapshot(ctx.env, ctx.now),
  ]);
  const row = report?.results[0];
  resolveVisibility(ctx, snapshot, input.reportId, requested, row === undefined ? null : ReportRowSchema.parse(row));
  const rows = z.array(SectionRowSchema).parse(sections?.results ?? []);
  return {
    queries: rows.map((s) => {
      const parameters = storedQueryParameters('report', s.sql_template);
      const q: Query = {
        id: s.id,
        name: s.name,
        description: s.description,
        sql: s.sql_template,
        tables: null,
        parameterized: parameters.length > 0,
        parameters,
        ordinal: s.ordinal,
        narrativeHints: s.narrative_hints,
      };
      if (s.chart_spec !== null) q.chartSpec = parseJsonColumn(s.chart_spec);
      return q;
    }),
  };
}
