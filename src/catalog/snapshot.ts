import { z } from 'zod';
import { configOf, type Env } from '../env';
import { TtlCache } from '../lib/ttl-cache';

/**
 * The catalog's small, hot tables (brands; reports with their section counts), read in one D1 round trip and
 * kept per isolate for CATALOG_CACHE_TTL_MS. Listing brands and reports is then computed in memory, with no
 * D1 round trip on the hot path (see README, Performance). Visibility is always decided per request from the
 * principal, so a cached snapshot can be stale by at most the TTL in *content* (a renamed brand, a new
 * report), never in who may see what. TTL 0 reads D1 on every call.
 */
const BrandRowSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  name: z.string().nullable(),
  dataset: z.string().nullable(),
  timezone: z.string().nullable(),
  currency: z.string().nullable(),
});
type CatalogBrand = z.infer<typeof BrandRowSchema>;

const ReportRowSchema = z.object({
  id: z.string(),
  type: z.enum(['system', 'org', 'brand']),
  orgId: z.string().nullable(),
  brandId: z.string().nullable(),
  name: z.string(),
  description: z.string().nullable(),
  queryCount: z.number().int(),
});
type CatalogReport = z.infer<typeof ReportRowSchema>;

/**
 * Whether a brand has a dataset, i.e. can be queried: the one statement of this rule (the brands list's
 * `queryable`, reports' `runnable`, run_query and describe_table's 409 BRAND_NOT_PROVISIONED, search's tables).
 */
export function hasDataset<B extends { dataset: string | null }>(brand: B): brand is B & { dataset: string } {
  return brand.dataset !== null;
}

/**
 * Whether a report applies to a brand: `system` reports to every brand, `org` reports to the brands of their
 * org, `brand` reports to their own brand. The one statement of this rule (listings and stored-query runs).
 */
export function reportAppliesTo(
  report: { type: 'system' | 'org' | 'brand'; orgId: string | null; brandId: string | null },
  brand: { id: string; orgId: string },
): boolean {
  return (
    report.type === 'system' ||
    (report.type === 'org' && report.orgId === brand.orgId) ||
    (report.type === 'brand' && report.brandId === brand.id)
  );
}

/** The brands among `brandIds` (in their order) that `report` applies to; ids missing from the snapshot never. */
export function brandsReportAppliesTo(
  snapshot: CatalogSnapshot,
  report: Parameters<typeof reportAppliesTo>[0],
  brandIds: readonly string[],
): string[] {
  return brandIds.filter((id) => {
    const brand = snapshot.brands.get(id);
    return brand !== undefined && reportAppliesTo(report, brand);
  });
}

export interface CatalogSnapshot {
  brands: ReadonlyMap<string, CatalogBrand>;
  /** Every report, ordered by id. */
  reports: readonly CatalogReport[];
}

const cache = new TtlCache<CatalogSnapshot>(1);

/** The catalog snapshot at `now`: this isolate's copy while fresh, else one batched D1 read. */
export async function catalogSnapshot(env: Env, now: number): Promise<CatalogSnapshot> {
  const config = configOf(env);
  const ttlMs = config.CATALOG_CACHE_TTL_MS;
  // A snapshot larger than CACHE_MAX_BYTES is not kept: such a catalog reads D1 on every request.
  cache.bound({ maxBytes: config.CACHE_MAX_BYTES });
  if (ttlMs > 0) {
    const hit = cache.get('catalog', now, ttlMs);
    if (hit) return hit;
  }
  const [brands, reports] = await env.DB.batch([
    env.DB.prepare('SELECT id, org_id AS orgId, name, dataset, timezone, currency FROM brands ORDER BY id'),
    env.DB.prepare(
      `SELECT r.id, r.type, r.org_id AS orgId, r.brand_id AS brandId, r.name, r.description,
              (SELECT count(*) FROM report_queries q WHERE q.report_id = r.id) AS queryCount
         FROM reports r ORDER BY r.id`,
    ),
  ]);
  const snapshot: CatalogSnapshot = {
    brands: new Map(
      z
        .array(BrandRowSchema)
        .parse(brands?.results ?? [])
        .map((b) => [b.id, b]),
    ),
    reports: z.array(ReportRowSchema).parse(reports?.results ?? []),
  };
  if (ttlMs > 0) cache.set('catalog', snapshot, now);
  return snapshot;
}
