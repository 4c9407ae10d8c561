import { intVar } from '../env';
import { ApiError, describeError, type ErrorCode } from '../errors';
import { newId, sha256Hex } from '../lib/ids';
import { Timings } from '../lib/timings';
import { resolvePeriod, type ResolvedPeriod } from '../stored-queries/period';
import { fillTemplate } from '../stored-queries/template';
import { catalogSnapshot } from '../catalog/snapshot';
import { resolveStoredQuery, type BrandTarget } from '../stored-queries/stored-query';
import type { RunQueryRequest, RunQueryResponse } from '../schemas/run-query';
import { checkDryRun, checkSql, guardError } from '../sql/guard';
import { acquireRun, settleRun, type UsageTicket } from '../usage/usage';
import { createWarehouseClient } from '../warehouse/bigquery-client';
import type { OpContext } from './context';
import { resolveBrand } from './scope';
import { verdictCache } from './verdict-cache';

export interface RunQueryOptions {
  /** Rows returned before `truncated` is set (default env ROW_CAP; MCP passes MCP_ROW_CAP). */
  rowCap?: number;
  /** Largest JSON size of `rows` (MCP passes MCP_MAX_RESULT_BYTES); unbounded when omitted. */
  maxResultBytes?: number;
}

interface Target {
  brand: BrandTarget & { dataset: string };
  sql: string;
  queryId: string | null;
  period: ResolvedPeriod | null;
}

async function resolveTarget(ctx: OpContext, input: RunQueryRequest): Promise<Target> {
  const { env, principal } = ctx;
  if ('sql' in input) {
    const brandId = resolveBrand(principal, input.brandId, { required: true });
    const brand = (await catalogSnapshot(env, ctx.now)).brands.get(brandId);
    if (!brand) throw new ApiError('FORBIDDEN_BRAND', `this key cannot access brand ${JSON.stringify(brandId)}`);
    return { brand: provisioned(brand), sql: input.sql, queryId: null, period: null };
  }
  const stored = await resolveStoredQuery(env, ctx.now, principal, input.queryId, input.brandId);
  const brand = provisioned(stored.brand);
  const usesDates = stored.parameters.some((p) => p === 'start_date' || p === 'end_date');
  if (!usesDates && input.period !== undefined) {
    throw new ApiError('VALIDATION', `query ${stored.id} is not parameterized by dates; omit period (it runs as written)`, {
      details: { parameter: 'period' },
    });
  }
  const period = usesDates ? resolvePeriod(input.period, ctx.now, brand.timezone) : null;
  const sql = fillTemplate(stored.sqlTemplate, {
    dataset: brand.dataset,
    start_date: period?.startDate,
    end_date: period?.endDate,
  });
  return { brand, sql, queryId: stored.id, period };
}

function provisioned(b: BrandTarget): BrandTarget & { dataset: string } {
  if (b.dataset === null) {
    throw new ApiError('BRAND_NOT_PROVISIONED', `brand ${b.id} has no provisioned dataset yet; nothing can be queried`);
  }
  return { ...b, dataset: b.dataset };
}

/** Keeps rows within a JSON byte budget; returns how many fit. */
function rowsWithinBytes(rows: Record<string, unknown>[], maxBytes: number): number {
  let used = 2; // []
  const enc = new TextEncoder();
  for (let i = 0; i < rows.length; i++) {
    used += enc.encode(JSON.stringify(rows[i])).length + (i > 0 ? 1 : 0);
    if (used > maxBytes) return i;
  }
  return rows.length;
}

interface LogEntry {
  brandId: string | null;
  queryId: string | null;
  period: ResolvedPeriod | null;
  sql: string | null;
  dryRun: boolean;
  outcome: 'OK' | ErrorCode;
  bytesProcessed: number | null;
  bytesBilled: number | null;
  rowCount: number | null;
  durationMs: number;
}

/**
 * Writes the audit row. It runs after the response (waitUntil): a D1 write is a round trip to the primary, and
 * the caller should not wait for it. A failed write is logged with the full entry, so nothing is lost silently.
 */
async function writeLog(ctx: OpContext, e: LogEntry): Promise<void> {
  try {
    await ctx.env.DB.prepare(
      `INSERT INTO query_log (id, request_id, principal_kind, principal_id, brand_id, query_id, period, sql, dry_run,
         transport, outcome, bytes_processed, bytes_billed, row_count, duration_ms, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
      .bind(
        newId('ql'),
        ctx.requestId,
        ctx.principal.kind,
        ctx.principal.id,
        e.brandId,
        e.queryId,
        e.period ? JSON.stringify(e.period) : null,
        e.sql,
        e.dryRun ? 1 : 0,
        ctx.transport,
        e.outcome,
        e.bytesProcessed,
        e.bytesBilled,
        e.rowCount,
        e.durationMs,
        ctx.now,
      )
      .run();
  } catch (err) {
    ctx.log.error('query_log write failed', { internal: describeError(err), entry: e });
  }
}

/**
 * runQuery: one read-only query against one brand's dataset, raw SQL or a stored query by id.
 * Order: resolve brand and SQL -> guard (parse) -> dry run verdict (cached) -> byte ceiling -> usage budget ->
 * execute -> settle bytes -> audit log. Every outcome, accepted or rejected, is written to query_log.
 */
export async function runQuery(
  ctx: OpContext,
  input: RunQueryRequest,
  opts: RunQueryOptions = {},
): Promise<{ result: RunQueryResponse; headers: Record<string, string> }> {
  const started = Date.now();
  const startedPrecise = performance.now();
  const dryRun = input.dryRun === true;
  const log: LogEntry = {
    brandId: input.brandId ?? null,
    queryId: 'queryId' in input ? input.queryId : null,
    period: null,
    sql: 'sql' in input ? input.sql : null,
    dryRun,
    outcome: 'OK',
    bytesProcessed: null,
    bytesBilled: null,
    rowCount: null,
    durationMs: 0,
  };
  const timings = new Timings();
  let out: Awaited<ReturnType<typeof execute>>;
  try {
    out = await execute(ctx, input, opts, log, timings);
  } catch (err) {
    log.outcome = err instanceof ApiError ? err.code : 'INTERNAL';
    if (!(err instanceof ApiError)) ctx.log.error('runQuery failed', { internal: describeError(err) });
    throw err;
  } finally {
    log.durationMs = Date.now() - started;
    ctx.waitUntil(writeLog(ctx, log));
  }
  timings.add('total', performance.now() - startedPrecise);
  out.headers['Server-Timing'] = timings.header();
  return out;
}

async function execute(
  ctx: OpContext,
  input: RunQueryRequest,
  opts: RunQueryOptions,
  log: LogEntry,
  timings: Timings,
): Promise<{ result: RunQueryResponse; headers: Record<string, string> }> {
  const { env, principal } = ctx;
  const dryRun = log.dryRun;
  const target = await timings.time('resolve', () => resolveTarget(ctx, input));
  log.brandId = target.brand.id;
  log.sql = target.sql;
  log.period = target.period;
  const scope = { project: env.BIGQUERY_PROJECT, dataset: target.brand.dataset };

  // Gate 2a + 2b: limits, prescan and the parser's table allowlist.
  const verdict = await timings.time('guard', () => checkSql(target.sql, scope));
  if (!verdict.ok) throw guardError(verdict);

  const client = createWarehouseClient(env, { waitUntil: ctx.waitUntil });
  const labels = {
    principal: `${principal.kind}_${principal.id}`,
    brand: target.brand.id,
    operation: 'run_query',
    stored_query: target.queryId ?? 'none',
    transport: ctx.transport,
  };

  // Gate 2c: BigQuery's dry run, unless this exact SQL passed for this dataset a few minutes ago.
  const cacheKey = `${target.brand.dataset}:${await timings.time('guard', () => sha256Hex(target.sql))}`;
  let estimate = verdictCache.get(cacheKey, ctx.now);
  if (estimate === undefined || dryRun) {
    const dry = await timings.time('dryrun', () => client.dryRun(target.sql, { brandId: target.brand.id, requestId: ctx.requestId, labels }));
    const dv = checkDryRun(dry, scope);
    if (!dv.ok) throw guardError(dv, 'dry-run');
    estimate = dry.totalBytesProcessed;
    verdictCache.set(cacheKey, estimate, ctx.now);
  }
  log.bytesProcessed = estimate;
  if (estimate > principal.limits.maxBytesBilled) {
    throw new ApiError(
      'QUERY_TOO_EXPENSIVE',
      `the query would scan about ${estimate} bytes; this key's ceiling is ${principal.limits.maxBytesBilled} bytes per query`,
      { details: { stage: 'guard', estimatedBytes: estimate, maxBytesBilled: principal.limits.maxBytesBilled } },
    );
  }

  if (dryRun) {
    const ticket = await timings.time('usage', () => acquireRun(env, principal, ctx.now, { consume: false }));
    log.bytesBilled = 0;
    log.rowCount = 0;
    return {
      result: {
        brandId: target.brand.id,
        rows: [],
        rowCount: 0,
        truncated: false,
        stats: { dryRun: true, totalBytesBilled: 0, totalBytesProcessed: estimate },
      },
      headers: ticket.headers,
    };
  }

  const ticket: UsageTicket = await timings.time('usage', () => acquireRun(env, principal, ctx.now, { consume: true }));
  let bytesBilled = 0;
  try {
    const res = await timings.time('warehouse', () => client.query(target.sql, {
      brandId: target.brand.id,
      requestId: ctx.requestId,
      labels,
      maxBytesBilled: principal.limits.maxBytesBilled,
      rowCap: opts.rowCap ?? intVar(env, 'ROW_CAP'),
      timeoutMs: intVar(env, 'QUERY_TIMEOUT_MS'),
    }));
    bytesBilled = res.totalBytesBilled;
    let rows = res.rows;
    let truncated = res.truncated;
    if (opts.maxResultBytes !== undefined) {
      const fit = rowsWithinBytes(rows, opts.maxResultBytes);
      if (fit < rows.length) {
        rows = rows.slice(0, fit);
        truncated = true;
      }
    }
    log.bytesProcessed = res.totalBytesProcessed;
    log.bytesBilled = res.totalBytesBilled;
    log.rowCount = rows.length;
    return {
      result: {
        brandId: target.brand.id,
        rows,
        rowCount: rows.length,
        truncated,
        schema: res.schema,
        stats: { dryRun: false, totalBytesBilled: res.totalBytesBilled, totalBytesProcessed: res.totalBytesProcessed },
      },
      headers: ticket.headers,
    };
  } finally {
    // The run is already counted; settling adds the bytes billed. It must not delay or fail the answer.
    ctx.waitUntil(
      settleRun(env, principal, ticket, { bytesBilled }).catch((err: unknown) =>
        ctx.log.error('usage settle failed', { internal: describeError(err), ticket: ticket.id, bytesBilled }),
      ),
    );
  }
}
