/**
 * The way out of the `service-v1` mapping: callers name the contract's project (`CONTRACT_PROJECT`) and never
 * learn the deployment's own (`BIGQUERY_PROJECT`). The way in is `withProject` in src/sql/guard.ts, at the exact
 * references the guard resolved; everything the warehouse says back that names the real project is mapped here.
 * Pure; with equal projects (a deployment whose project is `service-v1`) each function returns its input.
 */
import { ApiError } from '../../errors';
import { CONTRACT_PROJECT, type DryRunFacts } from '../../sql/guard';

/** A dry run's references with the real project named as the contract's, so gate 2c and its messages speak it. */
export function contractReferences<T extends DryRunFacts>(dry: T, real: string): T {
  if (real === CONTRACT_PROJECT) return dry;
  const named = (projectId: string) => (projectId === real ? CONTRACT_PROJECT : projectId);
  return {
    ...dry,
    referencedTables: dry.referencedTables.map((t) => ({ ...t, projectId: named(t.projectId) })),
    referencedRoutines: dry.referencedRoutines.map((r) => ({ ...r, projectId: named(r.projectId) })),
  };
}

/**
 * Columns that carry a project id as metadata: INFORMATION_SCHEMA's catalog columns (`table_catalog`,
 * `catalog_name`, `routine_catalog`, `specific_catalog`, ...). Only these are mapped back, so a brand's own data
 * (a billing export's `project_id`, any STRING equal to the project id) is never rewritten (review N8).
 */
const CATALOG_COLUMN = /^(?:[a-z_]+_catalog|catalog_name)$/i;

/**
 * Rows with the real project id shown as the contract's in the metadata columns that carry it (CATALOG_COLUMN),
 * at any depth: a STRUCT or JSON object holding `table_catalog`, in an ARRAY or not (`ARRAY_AGG(t)`, `TO_JSON(t)`
 * over INFORMATION_SCHEMA). Only whole values: text that merely contains the id is left as it is.
 */
export function contractRows(rows: Record<string, unknown>[], real: string): Record<string, unknown>[] {
  if (real === CONTRACT_PROJECT) return rows;
  let changed = false;
  const out = rows.map((row) => {
    const mapped = mapCatalog(row, real);
    if (mapped !== row) changed = true;
    return mapped as Record<string, unknown>;
  });
  return changed ? out : rows;
}

/** `value` with its catalog columns mapped, recursively; the same object when nothing in it changed. */
function mapCatalog(value: unknown, real: string): unknown {
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    value.forEach((item, i) => {
      const mapped = mapCatalog(item, real);
      if (mapped === item) return;
      copy ??= [...value];
      copy[i] = mapped;
    });
    return copy ?? value;
  }
  if (value === null || typeof value !== 'object') return value;
  const obj = value as Record<string, unknown>;
  let copy: Record<string, unknown> | null = null;
  for (const key in obj) {
    const cell = obj[key];
    const mapped = CATALOG_COLUMN.test(key) && cell === real ? CONTRACT_PROJECT : mapCatalog(cell, real);
    if (mapped === cell) continue;
    copy ??= { ...obj };
    copy[key] = mapped;
  }
  return copy ?? obj;
}

/**
 * An error whose message or details name the real project (BigQuery's "Not found: Table acme-prod:acme.x", a
 * table in `details`), shown with the contract's. Other values pass through unchanged.
 */
export function contractError(err: unknown, real: string): unknown {
  if (real === CONTRACT_PROJECT || !(err instanceof ApiError)) return err;
  const message = err.message.replaceAll(real, CONTRACT_PROJECT);
  const detailsText = err.details === undefined ? undefined : JSON.stringify(err.details);
  const details = detailsText?.includes(real) ? (JSON.parse(detailsText.replaceAll(real, CONTRACT_PROJECT)) as unknown) : err.details;
  if (message === err.message && details === err.details) return err;
  return new ApiError(err.code, message, { details, internal: err.internal, reason: err.reason, headers: err.headers });
}
