import { ApiError, describeError, toApiError, type ErrorCode } from '../../errors';
import { newId, sha256Hex } from '../../lib/ids';
import { Timings } from '../../lib/timings';
import { resolvePeriod, type ResolvedPeriod } from './period';
import { fillTemplate } from '../../catalog/template';
import { catalogSnapshot, hasDataset } from '../../catalog/snapshot';
import { resolveStoredQuery, type BrandTarget } from './stored-query';
import type { QueryPageRequest, RunQueryRequest } from './run-query.input';
import type { ResolvedWindow, RunQueryResponse } from './run-query.schemas';
import { checkDryRun, checkSql, CONTRACT_PROJECT, guardError, MAX_REFERENCED_TABLES, withProject } from '../../sql/guard';
import { contractError, contractReferences, contractRows } from './contract-project';
import { runReservation } from '../../usage/reservation';
import { acquireRun, settleRun, takeMeter, type BudgetLeft, type UsageTicket } from '../../usage/usage';
import {
  createWarehouseClient,
  JobStillRunning,
  type JobRef,
  type QueryOptions,
  type WarehouseClient,
} from '../../warehouse/bigquery-client';
import type { OpContext } from '../../context';
import { issueResultCursor, openResultCursor, type ResultPosition } from './result-cursor';
import { resolveBrand } from '../../auth/scope';
import { rowOwner, type RowOwner } from '../../auth/ownership';
import { verdictCache } from './verdict-cache';
import { costUsd } from '../query-history/history';
import { deliverQueryLog } from './query-log';

export interface RunQueryOptions {
  /** Rows returned before `truncated` is set (default env ROW_CAP; MCP passes MCP_ROW_CAP). */
  rowCap?: number;
  /**
   * How many of `rows` fit the transport's size budget (MCP measures its own rendering); all when omitted.
   * The rest are not lost: the cursor starts at the first row left out.
   */
  fitRows?: (rows: Record<string, unknown>[]) => number;
  /**
   * A long run (src/features/query-jobs): once the run is admitted (checked, counted, its bytes reserved) it is
   * handed to this instead of being run here, and runQuery throws `HandedOff` with the handle it returns. From then
   * on the long run owns the usage ticket and writes the run's log row when it ends. It throws only before it has
   * recorded anything; then the run is settled at 0 bytes and the error answered as any failed run's.
   */
  handOff?: (run: AdmittedRun) => Promise<string>;
  /**
   * A run that may outlive the call (a plain MCP run_query): it runs as a synchronous run does (one `jobs.query`),
   * waiting up to `waitMs` instead of QUERY_TIMEOUT_MS, with BigQuery's `jobTimeoutMs` of a long job. A query still
   * running then is not cancelled: its BigQuery job is given to `adopt`, which records it as a long run and returns
   * its handle, and runQuery throws `HandedOff` as for `handOff` (the long run owns the ticket and writes the log row
   * from then on). `adopt` throws only before it has recorded anything; then the job is cancelled, the run settled
   * to what it billed, and the error answered as any failed run's.
   */
  overtime?: { waitMs: number; jobTimeoutMs: number; adopt: (run: AdmittedRun, job: JobRef) => Promise<string> };
}

/** What a long run needs of an admitted run: who, what (as logged and as sent), and the usage ticket it now owns. */
export interface AdmittedRun {
  brandId: string;
  /** The brand's organization (the record's owner org, as rowOwner decides for log rows). */
  brandOrgId: string;
  dataset: string;
  queryId: string | null;
  period: ResolvedPeriod | null;
  window: ResolvedWindow | null;
  /** The SQL as the caller wrote it (or the filled template): what the log shows. */
  sql: string;
  /** The SQL sent to the warehouse (the deployment's project). */
  sent: string;
  labels: Record<string, string>;
  estimate: number;
  ticket: UsageTicket;
  client: WarehouseClient;
}

/** Thrown by runQuery when `handOff` took the run: not an error, the long run's handle. */
export class HandedOff extends Error {
  constructor(readonly handle: string) {
    super(`run handed off as ${handle}`);
  }
}

/** What a run or a page answers: the body, the RateLimit-* headers, and the budget left (MCP puts it in the body). */
export interface RunQueryOutcome {
  result: RunQueryResponse;
  headers: Record<string, string>;
  budget: BudgetLeft;
  /** 0-based index of `rows[0]` within the whole result (0 for a run; the cursor's position for a page). */
  firstRow: number;
}

interface Target {
  brand: BrandTarget & { dataset: string };
  sql: string;
  queryId: string | null;
  period: ResolvedPeriod | null;
  window: ResolvedWindow | null;
}

/**
 * The run's brand and SQL. `accepted` is told the brand as soon as the brand check has passed (before the brand's
 * own refusals, such as BRAND_NOT_PROVISIONED), so the log row is the brand's from then on.
 */
async function resolveTarget(ctx: OpContext, input: RunQueryRequest, accepted: (brand: BrandTarget) => void): Promise<Target> {
  const { env, principal } = ctx;
  if ('sql' in input) {
    const brandId = resolveBrand(principal, input.brandId, { required: true, transport: ctx.transport });
    const brand = (await catalogSnapshot(env, ctx.now)).brands.get(brandId);
    if (!brand) throw new ApiError('FORBIDDEN_BRAND', `this key cannot access brand ${JSON.stringify(brandId)}`);
    accepted(brand);
    return { brand: provisioned(brand), sql: input.sql, queryId: null, period: null, window: null };
  }
  const stored = await resolveStoredQuery(env, ctx, input.queryId, input.brandId);
  accepted(stored.brand);
  const brand = provisioned(stored.brand);
  const usesDates = stored.parameters.some((p) => p === 'start_date' || p === 'end_date');
  if (!usesDates && input.period !== undefined) {
    throw new ApiError('VALIDATION', `query ${stored.id} is not parameterized by dates; omit period (it runs as written)`, {
      details: { parameter: 'period' },
    });
  }
  const period = usesDates ? resolvePeriod(input.period, ctx.now, brand.timezone) : null;
  const sql = filledOrRefused(stored, {
    dataset: brand.dataset,
    start_date: period?.startDate,
    end_date: period?.endDate,
  });
  const window: ResolvedWindow | null = period
    ? { ...period, ...(input.period?.cadence ? { cadence: input.period.cadence } : {}), timezone: brand.timezone ?? 'UTC' }
    : null;
  return { brand, sql, queryId: stored.id, period, window };
}

/**
 * The stored query's SQL filled for this run. The catalog checks templates when they are written, so a template that
 * does not fill (a row written around those checks) is the catalog's fault, not the caller's and not an outage: a
 * coded 400 naming the report and section, logged (warn, with the cause) by reportError, never a 500.
 */
function filledOrRefused(stored: Awaited<ReturnType<typeof resolveStoredQuery>>, values: Parameters<typeof fillTemplate>[1]): string {
  try {
    return fillTemplate(stored.sqlTemplate, values);
  } catch (err) {
    const cause = err instanceof Error ? err.message : String(err);
    const what = stored.reportId === null ? `saved query ${stored.id}` : `report ${stored.reportId} section ${stored.id}`;
    throw new ApiError('QUERY_FAILED', `${what} cannot run: its stored SQL does not fill (${cause}); the catalog must be fixed`, {
      details: { stage: 'template', queryId: stored.id, ...(stored.reportId === null ? {} : { reportId: stored.reportId }) },
      internal: cause,
    });
  }
}

function provisioned(b: BrandTarget): BrandTarget & { dataset: string } {
  if (!hasDataset(b)) {
    throw new ApiError('BRAND_NOT_PROVISIONED', `brand ${b.id} has no provisioned dataset yet; nothing can be queried`);
  }
  return b;
}

/**
 * Cuts `rows` (starting at row `offset` of a `totalRows` result) to what the transport fits and signs the cursor
 * of the first row left out. At least one row is kept so a walk always advances.
 */
async function pageOut(
  ctx: OpContext,
  rows: Record<string, unknown>[],
  at: Omit<ResultPosition, 'expiresAt'> & { expiresAt?: number },
  opts: RunQueryOptions,
): Promise<{ rows: Record<string, unknown>[]; nextCursor: string | null }> {
  const fit = opts.fitRows ? Math.max(1, Math.min(rows.length, opts.fitRows(rows))) : rows.length;
  const kept = fit < rows.length ? rows.slice(0, fit) : rows;
  const next = at.offset + kept.length;
  if (next >= at.totalRows || kept.length === 0) return { rows: kept, nextCursor: null };
  return { rows: kept, nextCursor: await issueResultCursor(ctx.env, ctx.principal, { ...at, offset: next }, ctx.now) };
}

/**
 * A refusal that ran no query (the guard, the dry-run verdict, the byte ceiling) still takes a token from the
 * key's `checks` meter, so a loop of rejected queries is slowed like a loop of dry runs. A meter that cannot be
 * reached must not hide the refusal itself: nothing runs either way.
 */
async function meteredRefusal(ctx: OpContext, refusal: ApiError): Promise<ApiError> {
  try {
    await takeMeter(ctx.env, ctx.principal, 'checks', ctx.now);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'USAGE_LIMIT_EXCEEDED') return err;
    ctx.log.warn('checks meter unavailable; returning the refusal', { internal: describeError(err) });
  }
  return refusal;
}

interface LogEntry {
  /** Whose row it is: the caller's org until the brand check passes, then the brand and its org (rowOwner). */
  owner: RowOwner;
  queryId: string | null;
  period: ResolvedPeriod | null;
  sql: string | null;
  dryRun: boolean;
  outcome: 'OK' | ErrorCode;
  bytesProcessed: number | null;
  bytesBilled: number | null;
  rowCount: number | null;
  durationMs: number;
  /** The caller-facing message of a refused or failed run, as the caller got it (see loggedMessage). */
  errorMessage: string | null;
  /** BigQuery's ids of the execution, so a bill can be reconciled with GCP's (review N11). */
  bqJobId?: string | null;
  bqLocation?: string | null;
  bqQueryId?: string | null;
}

/** Characters of an error message the log keeps: room for BigQuery's own line about the caller's SQL. */
const LOGGED_MESSAGE_MAX = 1000;

/**
 * What the log keeps of a refusal or failure: the message the caller was sent (after the contract's project took
 * the real one's place), never the internal detail, cut at LOGGED_MESSAGE_MAX characters with a visible mark.
 */
function loggedMessage(err: unknown): string {
  const message = err instanceof ApiError ? err.message : toApiError(err).message;
  return message.length > LOGGED_MESSAGE_MAX ? `${message.slice(0, LOGGED_MESSAGE_MAX - 1)}…` : message;
}

/**
 * Writes the audit row after the response (waitUntil): the caller never waits for it. How it reaches D1 (a batched
 * queue, or one INSERT) is query-log.ts's business; a failure there is logged with the full row, never silent.
 */
function writeLog(ctx: OpContext, e: LogEntry): Promise<void> {
  return deliverQueryLog(
    ctx.env,
    {
      kind: 'query-log',
      id: newId('ql'),
      requestId: ctx.requestId,
      principalKind: ctx.principal.kind,
      principalId: ctx.principal.id,
      orgId: e.owner.orgId,
      userId: ctx.principal.userId ?? null,
      brandId: e.owner.brandId,
      queryId: e.queryId,
      period: e.period ? JSON.stringify(e.period) : null,
      sql: e.sql,
      dryRun: e.dryRun ? 1 : 0,
      transport: ctx.transport,
      outcome: e.outcome,
      bytesProcessed: e.bytesProcessed,
      bytesBilled: e.bytesBilled,
      rowCount: e.rowCount,
      durationMs: e.durationMs,
      bqJobId: e.bqJobId ?? null,
      bqLocation: e.bqLocation ?? null,
      bqQueryId: e.bqQueryId ?? null,
      createdAt: ctx.now,
      errorMessage: e.errorMessage,
      clientName: ctx.principal.clientName ?? null,
    },
    ctx.log,
  );
}

/**
 * One structured line per run (Workers Logs, `[observability]`): who ran what, where, how it ended and what it
 * cost; the fields of its query_log row. Never the key's secret or a result row.
 */
function logRun(ctx: OpContext, e: LogEntry): void {
  const cost = costUsd(e.bytesBilled ?? 0, ctx.config.ON_DEMAND_USD_PER_TIB);
  ctx.log.info('query run', {
    transport: ctx.transport,
    callerKind: ctx.principal.kind,
    callerId: ctx.principal.id,
    userId: ctx.principal.userId ?? null,
    orgId: e.owner.orgId,
    brandId: e.owner.brandId,
    queryId: e.queryId,
    period: e.period,
    sql: e.sql,
    dryRun: e.dryRun,
    outcome: e.outcome,
    errorCode: e.outcome === 'OK' ? null : e.outcome,
    rows: e.rowCount,
    bytesProcessed: e.bytesProcessed,
    bytesBilled: e.bytesBilled,
    bqJobId: e.bqJobId ?? null,
    bqQueryId: e.bqQueryId ?? null,
    durationMs: e.durationMs,
    estimatedCostUsd: cost,
  });
}

/**
 * runQuery: one read-only query against one brand's dataset, raw SQL or a stored query by id.
 * Order: resolve brand and SQL -> guard (parse) -> dry run verdict (cached) -> byte ceiling -> usage budget ->
 * execute -> settle bytes -> audit log. Every outcome, accepted or rejected, is written to query_log.
 */
export async function runQuery(ctx: OpContext, input: RunQueryRequest, opts: RunQueryOptions = {}): Promise<RunQueryOutcome> {
  const started = Date.now();
  const startedPrecise = performance.now();
  const dryRun = input.dryRun === true;
  const log: LogEntry = {
    // The requested brand is not the row's until the brand check has passed (execute sets it then).
    owner: rowOwner(ctx.principal, null),
    queryId: 'queryId' in input ? input.queryId : null,
    period: null,
    sql: 'sql' in input ? input.sql : null,
    dryRun,
    outcome: 'OK',
    bytesProcessed: null,
    bytesBilled: null,
    rowCount: null,
    durationMs: 0,
    errorMessage: null,
  };
  const timings = new Timings();
  let out: Awaited<ReturnType<typeof execute>>;
  let handedOff = false;
  try {
    out = await execute(ctx, input, opts, log, timings);
  } catch (err) {
    // A long run writes its own log row when it ends.
    if (err instanceof HandedOff) handedOff = true;
    if (handedOff) throw err;
    log.outcome = err instanceof ApiError ? err.code : 'INTERNAL';
    if (!(err instanceof ApiError)) ctx.log.error('runQuery failed', { internal: describeError(err) });
    const answered = contractError(err, ctx.env.BIGQUERY_PROJECT);
    log.errorMessage = loggedMessage(answered);
    throw answered;
  } finally {
    log.durationMs = Date.now() - started;
    if (!handedOff) {
      logRun(ctx, log);
      ctx.waitUntil(writeLog(ctx, log));
    }
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
): Promise<RunQueryOutcome> {
  const { env, principal } = ctx;
  const target = await timings.time('resolve', () =>
    resolveTarget(ctx, input, (brand) => {
      log.owner = rowOwner(principal, brand);
    }),
  );
  log.sql = target.sql;
  log.period = target.period;
  // Callers name the contract's project; the guard checks against it, and BigQuery gets the deployment's own.
  const scope = { project: CONTRACT_PROJECT, dataset: target.brand.dataset };

  // Gate 2a + 2b: limits, prescan and the parser's table allowlist.
  const verdict = await timings.time('guard', () => checkSql(target.sql, scope));
  if (!verdict.ok) throw await meteredRefusal(ctx, guardError(verdict));
  const run: PreparedRun = {
    ctx,
    target,
    sent: withProject(target.sql, verdict.projectAt, CONTRACT_PROJECT, env.BIGQUERY_PROJECT),
    client: createWarehouseClient(env, { waitUntil: ctx.waitUntil }),
    labels: {
      principal: `${principal.kind}_${principal.id}`,
      brand: target.brand.id,
      operation: 'run_query',
      stored_query: target.queryId ?? 'none',
      transport: ctx.transport,
    },
    log,
    timings,
  };

  // Gate 2c: BigQuery's dry run, unless this exact SQL passed for this dataset a few minutes ago.
  const { estimate, tables, metered } = await dryRunGate(run, scope, verdict.tables);
  log.bytesProcessed = estimate;
  if (estimate > principal.limits.maxBytesBilled) {
    const tooExpensive = new ApiError(
      'QUERY_TOO_EXPENSIVE',
      `the query would scan about ${estimate} bytes; this key's ceiling is ${principal.limits.maxBytesBilled} bytes per query`,
      { details: { stage: 'guard', estimatedBytes: estimate, maxBytesBilled: principal.limits.maxBytesBilled } },
    );
    throw metered ? tooExpensive : await meteredRefusal(ctx, tooExpensive);
  }
  return log.dryRun ? dryRunAnswer(run, estimate) : runAdmitted(run, estimate, tables, opts);
}

/** What one run carries from its checks to the warehouse: the target, the SQL as sent, the client and the log. */
interface PreparedRun {
  ctx: OpContext;
  target: Target;
  /** The SQL with the contract's project replaced by the deployment's, at the spans the guard resolved. */
  sent: string;
  client: WarehouseClient;
  labels: Record<string, string>;
  log: LogEntry;
  timings: Timings;
}

/**
 * Gate 2c: BigQuery's dry run checks what the statement really reads and estimates its bytes, unless the verdict
 * cache holds this exact SQL for this dataset. `metered` says whether a `checks` token was taken for it.
 */
async function dryRunGate(
  run: PreparedRun,
  scope: { project: string; dataset: string },
  parsedTables: string[],
): Promise<{ estimate: number; tables: number; metered: boolean }> {
  const { ctx, target, timings } = run;
  const { env, principal } = ctx;
  const cacheKey = `${target.brand.dataset}:${await timings.time('guard', () => sha256Hex(target.sql))}`;
  const cached = run.log.dryRun ? undefined : verdictCache.get(ctx.config, cacheKey, ctx.now);
  if (cached !== undefined) return { estimate: cached.estimate, tables: cached.tables, metered: false };
  // Every warehouse dry run the cache does not answer takes a token from the key's checks meter before it is
  // sent, whether it then passes, is refused, fails or times out: a dry run bills nothing but is a warehouse call.
  await timings.time('usage', () => takeMeter(env, principal, 'checks', ctx.now));
  const dry = await timings.time('dryrun', () =>
    run.client.dryRun(run.sent, { brandId: target.brand.id, dataset: target.brand.dataset, requestId: ctx.requestId, labels: run.labels }),
  );
  const dv = checkDryRun(contractReferences(dry, env.BIGQUERY_PROJECT), scope, parsedTables);
  if (!dv.ok) throw guardError(dv, 'dry-run');
  const listed = Math.max(dry.referencedTables.length, parsedTables.length);
  const tables = listed < MAX_REFERENCED_TABLES ? listed : await timings.time('dryrun', () => matchedTables(run, parsedTables, listed));
  // A count the listing could not give (undefined) reserves the key's whole ceiling, and is not remembered.
  const fresh = { estimate: dry.totalBytesProcessed, tables: tables ?? Number.MAX_SAFE_INTEGER };
  if (tables !== undefined) verdictCache.set(ctx.config, cacheKey, fresh, ctx.now);
  return { ...fresh, metered: true };
}

/**
 * How many tables a query the dry-run gate passed with a full list (`listed`, 50 or more) reads, for its
 * reservation (review 2, N1b). Past 50 BigQuery's list may be incomplete ("Queries that reference more than 50
 * tables will not have a complete list", JobStatistics2.referencedTables), and the gate passes such a list only for
 * wildcard tables of the brand's dataset, each matched shard billing its own 10 MB minimum (on-demand pricing). So
 * the shards are counted in the dataset's `tables.list` (metadata: free, and only for these queries): every table
 * whose name starts with a wildcard's prefix, as BigQuery matches them. A `_TABLE_SUFFIX` filter may read fewer;
 * the reservation is the most the run can bill, and the settlement charges what it did bill. Undefined when the
 * listing fails: the run then reserves the key's whole per-query ceiling rather than too little.
 */
async function matchedTables(run: PreparedRun, parsedTables: readonly string[], listed: number): Promise<number | undefined> {
  const { ctx, target } = run;
  const qualifier = `${CONTRACT_PROJECT}.${target.brand.dataset}.`;
  const prefixes = parsedTables.filter((t) => t.startsWith(qualifier) && t.endsWith('*')).map((t) => t.slice(qualifier.length, -1));
  try {
    const all = await run.client.listTables({
      brandId: target.brand.id,
      dataset: target.brand.dataset,
      requestId: ctx.requestId,
      labels: run.labels,
    });
    const matched = all.filter((t) => prefixes.some((p) => t.table.startsWith(p))).length;
    return Math.max(listed, matched);
  } catch (err) {
    ctx.log.warn('wildcard shards not counted; the run reserves its whole byte ceiling', { internal: describeError(err) });
    return undefined;
  }
}

/** A dry run's answer: the estimate, nothing billed; still refused when the run budget is spent. */
async function dryRunAnswer(run: PreparedRun, estimate: number): Promise<RunQueryOutcome> {
  const { ctx, target, log } = run;
  // Still refused when the run budget is spent, so a client learns it before planning more work.
  const ticket = await run.timings.time('usage', () => acquireRun(ctx.env, ctx.principal, ctx.now, { consume: false }));
  log.bytesBilled = 0;
  log.rowCount = 0;
  return {
    result: {
      brandId: target.brand.id,
      rows: [],
      rowCount: 0,
      truncated: false,
      totalRows: 0,
      nextCursor: null,
      stats: { dryRun: true, totalBytesBilled: 0, totalBytesProcessed: estimate },
      ...(target.window ? { window: target.window } : {}),
    },
    headers: ticket.headers,
    budget: ticket.budget,
    firstRow: 0,
  };
}

/** An admitted run: its possible bytes reserved, the query run, the first page cut, the bytes settled after. */
async function runAdmitted(run: PreparedRun, estimate: number, tables: number, opts: RunQueryOptions): Promise<RunQueryOutcome> {
  const { ctx, target, log, timings, client, sent, labels } = run;
  const { env, principal } = ctx;
  // The run reserves the most it can bill before it starts, so runs admitted together see each other's bytes.
  const reserveBytes = runReservation(estimate, tables, principal.limits.maxBytesBilled);
  const ticket: UsageTicket = await timings.time('usage', () => acquireRun(env, principal, ctx.now, { consume: true, reserveBytes }));
  if (opts.handOff) throw await handOff(run, opts.handOff, { estimate, ticket });
  const { overtime } = opts;
  /** This run settles its ticket, unless a long run took the still-running job (and the ticket with it). */
  let owned = true;
  let bytesBilled = 0;
  // What a failed or abandoned execution billed, learned in the background: added to what is known, never
  // replacing it (review N2). One answer is one execution, so there is at most one; summing keeps every byte.
  const late: Promise<number>[] = [];
  try {
    const queryOpts: QueryOptions = {
      brandId: target.brand.id,
      dataset: target.brand.dataset,
      requestId: ctx.requestId,
      labels,
      maxBytesBilled: principal.limits.maxBytesBilled,
      rowCap: opts.rowCap ?? ctx.config.ROW_CAP,
      maxResultBytes: ctx.config.MAX_RESULT_BYTES,
      timeoutMs: overtime?.waitMs ?? ctx.config.QUERY_TIMEOUT_MS,
      ...(overtime ? { jobTimeoutMs: overtime.jobTimeoutMs, leaveRunning: true } : {}),
      tables,
      billedIfUnknown: reserveBytes,
      // A transport that cuts the answer itself (MCP) continues it with a cursor over the same execution: BigQuery
      // keeps a job for it from the start, so the cut never runs the query again (review N1). A run that may
      // outlive the call needs the job too, to be watched once the call ends.
      keepJob: opts.fitRows !== undefined || overtime !== undefined,
      onLateBilling: (billed) => {
        late.push(billed);
      },
    };
    const res = await timings.time('warehouse', () => client.query(sent, queryOpts));
    bytesBilled = res.totalBytesBilled;
    log.bqJobId = res.jobId;
    log.bqLocation = res.location;
    log.bqQueryId = res.queryId;
    const resRows = contractRows(res.rows, env.BIGQUERY_PROJECT);
    const paged =
      res.jobId && res.location !== null && res.totalRows > 0
        ? await pageOut(
            ctx,
            resRows,
            {
              brandId: target.brand.id,
              jobId: res.jobId,
              location: res.location,
              totalRows: res.totalRows,
              offset: 0,
              ...(target.queryId ? { queryId: target.queryId } : {}),
              ...(target.window ? { window: target.window } : {}),
            },
            opts,
          )
        : { rows: resRows, nextCursor: null };
    const { rows } = paged;
    log.bytesProcessed = res.totalBytesProcessed;
    log.bytesBilled = res.totalBytesBilled;
    log.rowCount = rows.length;
    return {
      result: {
        brandId: target.brand.id,
        rows,
        rowCount: rows.length,
        truncated: rows.length < res.totalRows,
        totalRows: res.totalRows,
        nextCursor: paged.nextCursor,
        schema: res.schema,
        stats: { dryRun: false, totalBytesBilled: res.totalBytesBilled, totalBytesProcessed: res.totalBytesProcessed },
        ...(target.window ? { window: target.window } : {}),
      },
      headers: ticket.headers,
      budget: {
        ...ticket.budget,
        bytesRemaining: Math.min(
          ticket.budget.bytesLimit,
          Math.max(0, ticket.budget.bytesRemaining + ticket.reservedBytes - res.totalBytesBilled),
        ),
      },
      firstRow: 0,
    };
  } catch (err) {
    if (overtime && err instanceof JobStillRunning) {
      // Still running when the wait ran out: a long run records the job (and takes the ticket), or, if it could
      // not, the job is stopped and this run settles what it billed.
      const passed = await passOn(run, (admitted) => overtime.adopt(admitted, err.job), { estimate, ticket });
      if ('handle' in passed) {
        owned = false;
        throw new HandedOff(passed.handle);
      }
      late.push(client.cancelJob(err.job, { brandId: target.brand.id, requestId: ctx.requestId, labels, billedIfUnknown: reserveBytes }));
      throw chargedFailure(passed.error, ticket);
    }
    // The run was counted: a failure after admission says so with the budget's headers, as a success would.
    throw chargedFailure(err, ticket);
  } finally {
    // The run is already counted; settling adds the bytes billed. It must not delay or fail the answer. A run that
    // timed out settles once the abandoned job's bytes are known.
    if (owned) settleLater(ctx, ticket, bytesBilled, late);
  }
}

/** Settles `ticket` in the background to `bytesBilled` plus what `late` learns (abandoned or fallback jobs). */
function settleLater(ctx: OpContext, ticket: UsageTicket, bytesBilled: number, late: Promise<number>[]): void {
  const billed = Promise.all(late).then((each) => each.reduce((sum, b) => sum + b, bytesBilled));
  ctx.waitUntil(
    billed
      .then((bytes) => settleRun(ctx.env, ctx.principal, ticket, { bytesBilled: bytes }))
      .catch((err: unknown) => ctx.log.error('usage settle failed', { internal: describeError(err), ticket: ticket.id, bytesBilled })),
  );
}

/** Gives an admitted run to a long run: its handle, or the failure of a long run that recorded nothing. */
async function passOn(
  run: PreparedRun,
  to: (run: AdmittedRun) => Promise<string>,
  a: { estimate: number; ticket: UsageTicket },
): Promise<{ handle: string } | { error: unknown }> {
  const { target } = run;
  try {
    return {
      handle: await to({
        brandId: target.brand.id,
        brandOrgId: target.brand.orgId,
        dataset: target.brand.dataset,
        queryId: target.queryId,
        period: target.period,
        window: target.window,
        sql: target.sql,
        sent: run.sent,
        labels: run.labels,
        estimate: a.estimate,
        ticket: a.ticket,
        client: run.client,
      }),
    };
  } catch (error) {
    return { error };
  }
}

/** Gives an admitted run to a long run before it runs; what to throw: its handle, or the failure (settled at 0). */
async function handOff(
  run: PreparedRun,
  to: NonNullable<RunQueryOptions['handOff']>,
  a: { estimate: number; ticket: UsageTicket },
): Promise<unknown> {
  const passed = await passOn(run, to, a);
  if ('handle' in passed) return new HandedOff(passed.handle);
  settleLater(run.ctx, a.ticket, 0, []);
  return chargedFailure(passed.error, a.ticket);
}

/**
 * A run that was admitted (counted, its bytes reserved) and then failed in the warehouse: the error carries the
 * `RateLimit-*` headers of the run it spent, and a 503 or 504, where trying again later can help, a `Retry-After`
 * (the warehouse's own when it gave one, else WAREHOUSE_RETRY_AFTER_SECONDS), so a client neither guesses its
 * budget nor retries at once.
 */
function chargedFailure(err: unknown, ticket: UsageTicket): unknown {
  if (!(err instanceof ApiError)) return err;
  const headers: Record<string, string> = { ...ticket.headers, ...err.headers };
  if ((err.status === 503 || err.status === 504) && headers['Retry-After'] === undefined) {
    headers['Retry-After'] = String(WAREHOUSE_RETRY_AFTER_SECONDS);
  }
  return new ApiError(err.code, err.message, { details: err.details, internal: err.internal, reason: err.reason, headers });
}

/**
 * Seconds a client is told to wait after a run the warehouse could not serve (busy, unreachable, timed out):
 * long enough for a transient overload to clear, short against an interactive session.
 */
const WAREHOUSE_RETRY_AFTER_SECONDS = 5;

/**
 * The next page of a capped result, read from the job's stored result with the brand's own service account:
 * no new job, nothing billed, no run counted. Page reads take a token from the key's `pages` meter instead.
 */
export async function readQueryPage(ctx: OpContext, input: QueryPageRequest, opts: RunQueryOptions = {}): Promise<RunQueryOutcome> {
  const startedPrecise = performance.now();
  return readResultPage(ctx, await openResultCursor(ctx.env, ctx.principal, input.cursor, ctx.now), opts, startedPrecise);
}

/**
 * A page of a stored result from `pos`, as a cursor page reads it (the `pages` meter, nothing billed). `totalRows`
 * null: not known yet (a long job's first page), so the page asks for the transport's cap and BigQuery's answer says.
 */
export async function readResultPage(
  ctx: OpContext,
  pos: Omit<ResultPosition, 'totalRows'> & { totalRows: number | null },
  opts: RunQueryOptions = {},
  startedPrecise = performance.now(),
): Promise<RunQueryOutcome> {
  const timings = new Timings();
  const ticket = await timings.time('usage', () => takeMeter(ctx.env, ctx.principal, 'pages', ctx.now));
  const rowCap = opts.rowCap ?? ctx.config.ROW_CAP;
  const page = await timings
    .time('warehouse', () =>
      createWarehouseClient(ctx.env, { waitUntil: ctx.waitUntil }).readPage({
        brandId: pos.brandId,
        requestId: ctx.requestId,
        labels: {},
        jobId: pos.jobId,
        location: pos.location,
        startIndex: pos.offset,
        maxResults: pos.totalRows === null ? rowCap : Math.min(rowCap, pos.totalRows - pos.offset),
        maxResultBytes: ctx.config.MAX_RESULT_BYTES,
      }),
    )
    .catch((err: unknown) => {
      throw contractError(err, ctx.env.BIGQUERY_PROJECT);
    });
  const total = Math.max(pos.totalRows ?? 0, page.totalRows);
  const pageRows = contractRows(page.rows, ctx.env.BIGQUERY_PROJECT);
  const { rows, nextCursor } = await pageOut(ctx, pageRows, { ...pos, totalRows: total }, opts);
  timings.add('total', performance.now() - startedPrecise);
  return {
    result: {
      brandId: pos.brandId,
      rows,
      rowCount: rows.length,
      truncated: nextCursor !== null,
      totalRows: total,
      nextCursor,
      schema: page.schema,
      stats: { dryRun: false, totalBytesBilled: 0, totalBytesProcessed: 0 },
      ...(pos.window ? { window: pos.window } : {}),
    },
    headers: { ...ticket.headers, 'Server-Timing': timings.header() },
    budget: ticket.budget,
    firstRow: pos.offset,
  };
}
