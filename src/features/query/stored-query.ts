import { brandsReportAppliesTo, catalogSnapshot } from '../../catalog/snapshot';
import type { OpContext } from '../../context';
import type { Env } from '../../env';
import { ApiError } from '../../errors';
import { resolveBrand } from '../../auth/scope';
import { storedQueryParameters } from '../../catalog/template';

/** A brand row as the query runner needs it. */
export interface BrandTarget {
  id: string;
  orgId: string;
  dataset: string | null;
  timezone: string | null;
}

/** A stored query (report section or saved query) found by id, before visibility is decided. */
interface StoredQueryRow {
  kind: 'report' | 'saved';
  id: string;
  sql: string;
  report_type: 'system' | 'org' | 'brand';
  report_id: string | null;
  org_id: string | null;
  brand_id: string | null;
}

interface ResolvedStoredQuery {
  kind: 'report' | 'saved';
  id: string;
  /** The section's report; null for a saved query. */
  reportId: string | null;
  sqlTemplate: string;
  parameters: string[];
  brand: BrandTarget;
}

function notFound(queryId: string): ApiError {
  return new ApiError('QUERY_NOT_FOUND', `no query ${JSON.stringify(queryId)} is visible to this brand`);
}

/**
 * Finds a report section or saved query by id and decides the brand it runs against.
 * Owned queries (saved, brand reports) infer their brand; shared ones (system, org) need one from the caller
 * unless the principal has a single brand. A query the brand cannot see is 404, never 403, so ids of other
 * tenants' queries do not leak.
 */
export async function resolveStoredQuery(
  env: Env,
  ctx: Pick<OpContext, 'now' | 'principal' | 'transport'>,
  queryId: string,
  brandId: string | undefined,
): Promise<ResolvedStoredQuery> {
  const { now, principal } = ctx;
  if (brandId !== undefined) resolveBrand(principal, brandId, { required: true });
  const [row, snapshot] = await Promise.all([
    env.DB.prepare(
      `SELECT 'report' AS kind, q.id, q.sql_template AS sql, r.type AS report_type, r.id AS report_id, r.org_id, r.brand_id
         FROM report_queries q JOIN reports r ON r.id = q.report_id WHERE q.id = ?1
       UNION ALL
       SELECT 'saved', s.id, s.sql, 'brand', NULL, NULL, s.brand_id FROM saved_queries s WHERE s.id = ?1
       LIMIT 1`,
    )
      .bind(queryId)
      .first<StoredQueryRow>(),
    catalogSnapshot(env, now),
  ]);
  if (!row) throw notFound(queryId);
  const report = { type: row.report_type, orgId: row.org_id, brandId: row.brand_id };

  let targetId: string;
  if (row.report_type === 'brand') {
    if (!row.brand_id || !principal.brandIds.includes(row.brand_id)) throw notFound(queryId);
    if (brandId !== undefined && brandId !== row.brand_id) throw notFound(queryId);
    targetId = row.brand_id;
  } else {
    // A shared query that applies to none of the principal's brands is 404 before anything else: asking an org
    // principal for brandId here would confirm that another tenant's query id exists.
    if (brandId === undefined && brandsReportAppliesTo(snapshot, report, principal.brandIds).length === 0) throw notFound(queryId);
    targetId = resolveBrand(principal, brandId, { required: true, transport: ctx.transport });
  }
  const brand = snapshot.brands.get(targetId);
  if (!brand || brandsReportAppliesTo(snapshot, report, [targetId]).length === 0) throw notFound(queryId);

  return {
    kind: row.kind,
    id: row.id,
    reportId: row.report_id,
    sqlTemplate: row.sql,
    parameters: storedQueryParameters(row.kind, row.sql),
    brand,
  };
}
