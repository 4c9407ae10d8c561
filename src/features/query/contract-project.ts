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
 * Rows with every cell that is exactly the real project id shown as the contract's: what INFORMATION_SCHEMA
 * views return as `table_catalog` (or `SELECT @@project_id`-like facts, which the guard refuses anyway). Only
 * whole values: a brand's text that merely contains the id is its own data.
 */
export function contractRows(rows: Record<string, unknown>[], real: string): Record<string, unknown>[] {
  if (real === CONTRACT_PROJECT) return rows;
  let changed = false;
  const out = rows.map((row) => {
    let copy: Record<string, unknown> | null = null;
    for (const key in row) {
      if (row[key] !== real) continue;
      copy ??= { ...row };
      copy[key] = CONTRACT_PROJECT;
    }
    if (copy) changed = true;
    return copy ?? row;
  });
  return changed ? out : rows;
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
