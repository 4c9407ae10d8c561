import { configOf, type Env } from '../../env';
import { describeError } from '../../errors';
import type { Logger } from '../../lib/log';

/**
 * query_log retention: D1 has a per-database size ceiling and every run adds a row (its SQL text included), so rows
 * older than QUERY_LOG_RETENTION_DAYS are moved to the QUERY_LOG_ARCHIVE R2 bucket by the hourly cron
 * (wrangler.toml [triggers]; docs/deploy.md, Query-log retention). R2, not BigQuery: the Worker stays read-only on
 * the warehouse.
 *
 * Each batch is the oldest rows past the window (ORDER BY created_at, id), grouped by UTC day; each day's rows are
 * written as one NDJSON object (every column, as D1 holds it) at `query-log/YYYY-MM-DD/<first id>.ndjson`, and only
 * after that put succeeds are those rows deleted, by id. A run that crashed between the two selects the same rows
 * again and writes the same key with the same content; deleting ids already gone changes nothing. A failed put
 * deletes nothing and ends the run. Batches are bounded (D1's response size, a cron's subrequests).
 */

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionLimits {
  /** Rows read (and written to R2) per batch. */
  batchRows: number;
  /** Batches per run: about 3 subrequests each (select, put, delete). */
  maxBatches: number;
}

/** Hourly at these limits: up to 10,000 rows an hour, 240,000 a day, above the 100,000 runs a day docs/deploy.md plans for. */
export const RETENTION_LIMITS: RetentionLimits = { batchRows: 1000, maxBatches: 10 };

export interface RetentionResult {
  cutoff: number;
  archived: number;
  objects: string[];
  /** More rows past the window remain (the next run continues). */
  more: boolean;
}

type Row = Record<string, unknown> & { id: string; created_at: number };

/** The R2 key of one UTC day's rows, named by the first row's id (stable across reruns of the same batch). */
export function archiveKey(day: string, firstId: string): string {
  return `query-log/${day}/${firstId}.ndjson`;
}

/** Moves query_log rows created before `now - QUERY_LOG_RETENTION_DAYS` to R2, then deletes them from D1. */
export async function archiveQueryLog(
  env: Env,
  now: number,
  log: Logger,
  limits: RetentionLimits = RETENTION_LIMITS,
): Promise<RetentionResult> {
  const cutoff = now - configOf(env).QUERY_LOG_RETENTION_DAYS * DAY_MS;
  const result: RetentionResult = { cutoff, archived: 0, objects: [], more: false };
  for (let batch = 0; batch < limits.maxBatches; batch++) {
    const { results } = await env.DB.prepare('SELECT * FROM query_log WHERE created_at < ? ORDER BY created_at, id LIMIT ?')
      .bind(cutoff, limits.batchRows)
      .all<Row>();
    const byDay = new Map<string, Row[]>();
    for (const row of results) {
      const day = new Date(row.created_at).toISOString().slice(0, 10);
      byDay.set(day, [...(byDay.get(day) ?? []), row]);
    }
    for (const [day, rows] of byDay) {
      const key = archiveKey(day, rows[0]!.id);
      const body = rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
      try {
        await env.QUERY_LOG_ARCHIVE.put(key, body, { httpMetadata: { contentType: 'application/x-ndjson' } });
      } catch (err) {
        log.error('query_log archive write failed; nothing deleted', { internal: describeError(err), key, rows: rows.length });
        throw err;
      }
      const ids = JSON.stringify(rows.map((r) => r.id));
      await env.DB.prepare('DELETE FROM query_log WHERE id IN (SELECT value FROM json_each(?))').bind(ids).run();
      result.archived += rows.length;
      result.objects.push(key);
      log.info('query_log rows archived', { key, rows: rows.length });
    }
    if (results.length < limits.batchRows) {
      log.info('query_log retention pass done', { cutoff, archived: result.archived, objects: result.objects.length });
      return result;
    }
  }
  result.more = true;
  log.info('query_log retention pass stopped at its batch limit; the next run continues', {
    cutoff,
    archived: result.archived,
    objects: result.objects.length,
  });
  return result;
}

/**
 * Refreshes the statistics D1's query planner chooses indexes by (`PRAGMA optimize`, which runs ANALYZE on the tables
 * that need it), after the retention pass has deleted rows. Without statistics the planner takes the history's
 * newest-first page through the brand index, reading every visible run to sort them; with them it walks
 * `query_log_created` backwards and stops at the page (measured at 100,000 rows: 222 ms -> 7 ms for that statement;
 * docs/deploy.md, Query-log retention). Cloudflare recommends it after creating indexes
 * (https://developers.cloudflare.com/d1/best-practices/use-indexes/#run-pragma-optimize); hourly it also follows the
 * log's growth. A failure is logged, never thrown: the statistics are an optimization, the pass's result stands.
 */
export async function refreshPlannerStatistics(env: Env, log: Logger): Promise<void> {
  try {
    await env.DB.prepare('PRAGMA optimize').run();
  } catch (err) {
    log.warn('query planner statistics not refreshed (PRAGMA optimize failed)', { internal: describeError(err) });
  }
}
