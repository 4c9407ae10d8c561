import { newId } from '../../lib/ids';
import type { Statement } from '../memories/store';
import type { Catalog, Owner } from './format';
import { type CatalogPlan, type PlanEntry, planSummary, type StoredCatalog } from './plan';

/**
 * The record of applied catalogs (D1 `catalog_versions`, migrations/0004): one row per `catalog apply`, and one
 * per demo catalog content the seed first added. The live version is the newest row.
 *
 * Versions per organization (`catalog_version_orgs`, migrations/0009): a version is recorded for each organization
 * whose catalog it changed, with that organization's own part of the plan counted, and the admin pages' Catalog page
 * shows an administrator only the versions of their own organizations (with their part of the summary). An item
 * changes the catalog of its owner's organization (`org:X`: X; `brand:B`: B's org) and a `system` item every
 * organization's, as every brand sees it.
 */
export const LIVE_VERSION_SQL =
  'SELECT id, content_hash, plan_hash, applied_by, applied_at, source, summary FROM catalog_versions ORDER BY applied_at DESC, rowid ' +
  'DESC LIMIT 1';

export interface CatalogVersion {
  id: string;
  contentHash: string;
  appliedBy: string;
  appliedAt: number;
  source: string | null;
  summary: string;
}

export function versionFromRow(row: Record<string, unknown> | null | undefined): CatalogVersion | null {
  if (!row) return null;
  return {
    id: String(row.id),
    contentHash: String(row.content_hash),
    appliedBy: String(row.applied_by),
    appliedAt: Number(row.applied_at),
    source: row.source === null || row.source === undefined ? null : String(row.source),
    summary: String(row.summary),
  };
}

/** One organization's part of a version: its id and its entries counted as the version's summary counts them. */
export interface VersionOrg {
  orgId: string;
  summary: string;
}

/**
 * The organizations whose catalog `plan` changes, each with its own part counted. Owners are read from the folder
 * (what is added or changed) and from the database (what is removed, or an owner a change moves from). Entries left
 * out without --prune change nothing and count nowhere. Pure.
 */
export function versionOrgs(
  plan: CatalogPlan,
  folder: Catalog,
  stored: { orgs: readonly string[]; brands: readonly { id: string; orgId: string }[]; catalog: StoredCatalog['catalog'] },
): VersionOrg[] {
  const brandOrg = new Map(stored.brands.map((b) => [b.id, b.orgId]));
  const orgsOf = (o: Owner): string[] =>
    o.scope === 'system' ? [...stored.orgs] : o.scope === 'org' ? [o.orgId] : [brandOrg.get(o.brandId) ?? []].flat();
  const owners = (e: PlanEntry): Owner[] => {
    const id = e.kind === 'section' ? e.report : e.id;
    const find = <T extends { id: string }>(list: T[]) => list.find((x) => x.id === id);
    if (e.kind === 'report' || e.kind === 'section')
      return [find(folder.reports)?.owner, find(stored.catalog.reports)?.owner].filter((o) => o !== undefined);
    if (e.kind === 'memory') return [find(folder.memories)?.owner, find(stored.catalog.memories)?.owner].filter((o) => o !== undefined);
    return [find(folder.savedQueries)?.brandId, find(stored.catalog.savedQueries)?.brandId]
      .filter((b) => b !== undefined)
      .map((brandId): Owner => ({ scope: 'brand', orgId: null, brandId }));
  };
  const counts = new Map<string, CatalogPlan['counts']>();
  for (const e of plan.entries) {
    if (e.skipped) continue;
    for (const orgId of new Set(owners(e).flatMap(orgsOf))) {
      const c = counts.get(orgId) ?? { add: 0, change: 0, remove: 0, skipped: 0 };
      c[e.action]++;
      counts.set(orgId, c);
    }
  }
  return [...counts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([orgId, c]) => ({ orgId, summary: planSummary({ ...plan, counts: c }) }));
}

/**
 * The rows recording `plan` as applied, the last statements of its batch (so they are written exactly when the plan
 * is): the version, then its part per organization (`orgs`, from {@link versionOrgs}). With `once`, only when no
 * version with the same content is recorded yet (the seed, which reruns on every start).
 */
export function recordVersionStatements(
  plan: CatalogPlan,
  orgs: readonly VersionOrg[],
  meta: { appliedBy: string; now: number; source: string | null; once?: boolean },
): Statement[] {
  const versionId = newId('cv');
  const values = [
    versionId,
    plan.contentHash,
    plan.planHash,
    meta.appliedBy,
    meta.now,
    meta.source,
    planSummary(plan),
    JSON.stringify(plan.entries),
  ];
  const columns = 'id, content_hash, plan_hash, applied_by, applied_at, source, summary, plan_json';
  const version: Statement = meta.once
    ? {
        sql:
          `INSERT INTO catalog_versions (${columns}) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE NOT EXISTS (SELECT 1 FROM ` +
          `catalog_versions WHERE content_hash = ?2)`,
        params: values,
      }
    : { sql: `INSERT INTO catalog_versions (${columns}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`, params: values };
  // Written only with their version (the seed's may not be).
  const perOrg = orgs.map((o): Statement => ({
    sql:
      'INSERT INTO catalog_version_orgs (version_id, org_id, summary) SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM catalog_versions ' +
      'WHERE id = ?1)',
    params: [versionId, o.orgId, o.summary],
  }));
  return [version, ...perOrg];
}
