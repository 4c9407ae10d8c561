import { newId } from '../../lib/ids';
import type { Statement } from '../memories/store';
import { type CatalogPlan, planSummary } from './plan';

/**
 * The record of applied catalogs (D1 `catalog_versions`, migrations/0004): one row per `catalog apply`, and one
 * per demo catalog content the seed first added. The live version is the newest row.
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

/**
 * The row recording `plan` as applied, the last statement of its batch (so it is written exactly when the plan
 * is). With `once`, only when no version with the same content is recorded yet (the seed, which reruns on every
 * start).
 */
export function recordVersionStatement(
  plan: CatalogPlan,
  meta: { appliedBy: string; now: number; source: string | null; once?: boolean },
): Statement {
  const values = [
    newId('cv'),
    plan.contentHash,
    plan.planHash,
    meta.appliedBy,
    meta.now,
    meta.source,
    planSummary(plan),
    JSON.stringify(plan.entries),
  ];
  const columns = 'id, content_hash, plan_hash, applied_by, applied_at, source, summary, plan_json';
  return meta.once
    ? {
        sql:
          `INSERT INTO catalog_versions (${columns}) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE NOT EXISTS (SELECT 1 FROM ` +
          `catalog_versions WHERE content_hash = ?2)`,
        params: values,
      }
    : { sql: `INSERT INTO catalog_versions (${columns}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`, params: values };
}
