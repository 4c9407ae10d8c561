import { z } from 'zod';
import { listPage } from '../../web/console-parts';
import { configOf, type Env } from '../../env';
import type { Statement } from '../memories/store';
import type { FilterField } from '../../web/console-parts';
import { visibleSql, type Visibility } from '../../auth/ownership';
import { parseStoredPeriod, queryLogSchemaOf, queryLogColumnsSql, type QueryLogField, type StoredPeriod } from '../query/query-log';
import { Params, parseFilter, PeriodFilterFields, periodFilterSql } from './visibility';

/**
 * The query history: what ran (query_log), who ran it, what it cost. Pure statement builders and row parsing,
 * shared by the admin pages (src/web/pages/history.page.tsx) and the admin CLI (`history list|totals`), so both
 * show the same rows under the same visibility rule (visibleSql, src/auth/ownership.ts).
 */

const DAY = 24 * 60 * 60 * 1000;
const TIB = 1024 ** 4;

/** A run's or report's caller: an API key or an assistant connection (an OAuth grant), with its name when known. */
export interface Caller {
  kind: 'key' | 'connection';
  id: string;
  name: string | null;
}

/** How a caller reads on every page and in the CLI: "key BI export", "Claude, for ana@example.com". */
export function callerText(caller: Caller, user: { id: string; email: string | null } | null): string {
  if (caller.kind === 'key') return `key ${caller.name ?? caller.id}`;
  const who = user ? (user.email ?? user.id) : null;
  if (caller.name !== null) return who ? `${caller.name}, for ${who}` : caller.name;
  return `assistant ${caller.id}${who ? `, for ${who}` : ''}`;
}

/** Runs per page of the list; the CLI and the CSV export page through the same order. */
export const HISTORY_PAGE_SIZE = 50;
/** Rows one CSV export may hold; a larger export is refused with a message asking for a narrower filter. */
export const CSV_MAX_ROWS = 50_000;

const IdText = z.string().trim().max(200);

/** Filters of the history (page query string, CLI flags). Empty strings mean "any". */
export const HistoryFilterSchema = z.object({
  brand: IdText.optional(),
  /** An API key id. */
  key: IdText.optional(),
  /** An assistant connection (OAuth grant id). */
  connection: IdText.optional(),
  /** A user id (the acting user of an assistant connection). */
  user: IdText.optional(),
  /** `ok`, `error` (every refusal or failure), or one error code. */
  outcome: z
    .string()
    .trim()
    .regex(/^(ok|error|[A-Z_]{2,40})$/, 'outcome must be ok, error or an error code')
    .optional(),
  /** A stored query id. */
  query: IdText.optional(),
  requestId: IdText.optional(),
  ...PeriodFilterFields,
});
export type HistoryFilter = z.infer<typeof HistoryFilterSchema>;

export function parseHistoryFilter(raw: Record<string, string | undefined>) {
  return parseFilter(HistoryFilterSchema, raw);
}

function filterSql(v: Visibility, f: HistoryFilter, params: Params): string {
  const where = [visibleSql('q', v, params)];
  if (f.brand) where.push(`q.brand_id = ${params.p(f.brand)}`);
  if (f.key) where.push(`q.principal_kind = 'key' AND q.principal_id = ${params.p(f.key)}`);
  if (f.connection) where.push(`q.principal_kind = 'oauth' AND q.principal_id = ${params.p(f.connection)}`);
  if (f.user) where.push(`q.user_id = ${params.p(f.user)}`);
  if (f.outcome === 'ok') where.push(`q.outcome = 'OK'`);
  else if (f.outcome === 'error') where.push(`q.outcome <> 'OK'`);
  else if (f.outcome) where.push(`q.outcome = ${params.p(f.outcome)}`);
  if (f.query) where.push(`q.query_id = ${params.p(f.query)}`);
  if (f.requestId) where.push(`q.request_id = ${params.p(f.requestId)}`);
  where.push(...periodFilterSql('q', f, params));
  return where.join('\n   AND ');
}

const RUN_FIELDS = [
  'id',
  'requestId',
  'createdAt',
  'transport',
  'principalKind',
  'principalId',
  'userId',
  'brandId',
  'queryId',
  'period',
  'sql',
  'dryRun',
  'outcome',
  'rowCount',
  'bytesProcessed',
  'bytesBilled',
  'durationMs',
  'errorMessage',
  'clientName',
] as const satisfies readonly QueryLogField[];
const RUN_COLUMNS = `${queryLogColumnsSql('q', RUN_FIELDS)}, k.name AS "keyName", u.email AS "userEmail"`;
const RUN_JOINS = `FROM query_log q
  LEFT JOIN api_keys k ON q.principal_kind = 'key' AND k.id = q.principal_id
  LEFT JOIN users u ON u.id = q.user_id`;

/** Runs matching `f`, newest first, at most `limit` (one more than a page, to know whether there is a next one). */
export function listRunsStatement(v: Visibility, f: HistoryFilter, limit: number): Statement {
  const params = new Params();
  const where = filterSql(v, f, params);
  return {
    sql: `SELECT ${RUN_COLUMNS} ${RUN_JOINS}
 WHERE ${where}
 ORDER BY q.created_at DESC, q.id DESC LIMIT ${params.p(limit)}`,
    params: params.values,
  };
}

const RunRowSchema = queryLogSchemaOf(RUN_FIELDS).extend({
  keyName: z.string().nullable(),
  userEmail: z.string().nullable(),
});

/** One run as the history shows it. */
export interface Run {
  id: string;
  requestId: string;
  createdAt: number;
  transport: string;
  /**
   * Who ran it: an API key (its name) or an assistant connection (the assistant's name, null for a connection
   * approved before names were kept) and its user.
   */
  caller: Caller;
  user: { id: string; email: string | null } | null;
  brandId: string | null;
  queryId: string | null;
  period: StoredPeriod | null;
  sql: string | null;
  dryRun: boolean;
  outcome: string;
  /** The error code when the run was refused or failed; null when it succeeded. */
  errorCode: string | null;
  /** The message the caller was sent with that error (runs logged before it was kept have none). */
  errorMessage: string | null;
  rows: number | null;
  bytesBilled: number | null;
  bytesProcessed: number | null;
  durationMs: number | null;
  /** Estimated on-demand cost of the bytes billed, in USD. */
  costUsd: number;
}

export function toRun(raw: unknown, usdPerTib: number): Run {
  const r = RunRowSchema.parse(raw);
  return {
    id: r.id,
    requestId: r.requestId,
    createdAt: r.createdAt,
    transport: r.transport,
    caller:
      r.principalKind === 'key'
        ? { kind: 'key', id: r.principalId, name: r.keyName }
        : { kind: 'connection', id: r.principalId, name: r.clientName ?? null },
    user: r.userId === null ? null : { id: r.userId, email: r.userEmail },
    brandId: r.brandId,
    queryId: r.queryId,
    period: parseStoredPeriod(r.period),
    sql: r.sql,
    dryRun: r.dryRun === 1,
    outcome: r.outcome,
    errorCode: r.outcome === 'OK' ? null : r.outcome,
    errorMessage: r.outcome === 'OK' ? null : (r.errorMessage ?? null),
    rows: r.rowCount,
    bytesBilled: r.bytesBilled,
    bytesProcessed: r.bytesProcessed,
    durationMs: r.durationMs,
    costUsd: costUsd(r.bytesBilled ?? 0, usdPerTib),
  };
}

/** The cursor of the page after `runs` (which hold one run more than a page when there is a next page). */
export function nextCursor(runs: Run[], pageSize: number): string | null {
  return listPage(runs, pageSize).next;
}

/** Estimated on-demand cost of `bytesBilled` at `usdPerTib` (BigQuery bills on-demand queries per TiB). */
export function costUsd(bytesBilled: number, usdPerTib: number): number {
  return (bytesBilled / TIB) * usdPerTib;
}

/** "$0.0123" under a cent, "$1.23" above: a cost never reads as $0.00 when something was billed. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0.00';
  if (usd < 0.01) return `$${usd.toPrecision(2)}`;
  return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** ON_DEMAND_USD_PER_TIB: the on-demand price per TiB billed used for estimates (wrangler.toml; BigQuery's list price). */
export function usdPerTib(env: Env): number {
  return configOf(env).ON_DEMAND_USD_PER_TIB;
}

/** The totals windows, in days. */
export const TOTAL_WINDOWS = [1, 7, 30] as const;

export interface WindowTotal {
  runs: number;
  bytesBilled: number;
  costUsd: number;
}

export interface TotalsRow {
  /** `key`, `connection` or `brand`. */
  kind: 'key' | 'connection' | 'brand';
  /** Key id, grant id or brand id (null: runs that never reached a brand). */
  id: string | null;
  name: string | null;
  /** The user of a connection. */
  userEmail: string | null;
  windows: Record<(typeof TOTAL_WINDOWS)[number], WindowTotal>;
}

function windowColumns(params: Params, now: number): string {
  return TOTAL_WINDOWS.map((d) => {
    const since = params.p(now - d * DAY);
    return (
      `SUM(q.created_at > ${since}) AS runs_${d}, SUM(CASE WHEN q.created_at > ${since} THEN COALESCE(q.bytes_billed, 0) ELSE 0 ` +
      `END) AS bytes_${d}`
    );
  }).join(',\n  ');
}

/**
 * Runs and bytes billed in the last 1, 7 and 30 days (up to `now`), per caller (key or connection) and per brand,
 * over the visible runs. Two statements: by caller, then by brand.
 */
export function totalsStatements(v: Visibility, now: number): [Statement, Statement] {
  const byCaller = new Params();
  const callerWindows = windowColumns(byCaller, now);
  const callerWhere = visibleSql('q', v, byCaller);
  const callerSql = `SELECT q.principal_kind AS kind, q.principal_id AS id, COALESCE(MAX(k.name), MAX(q.client_name)) AS name,
  MAX(u.email) AS user_email,
  ${callerWindows}
 ${RUN_JOINS}
 WHERE ${callerWhere} AND q.created_at > ${byCaller.p(now - 30 * DAY)} AND q.created_at <= ${byCaller.p(now)}
 GROUP BY q.principal_kind, q.principal_id ORDER BY bytes_30 DESC, runs_30 DESC, q.principal_id`;
  const byBrand = new Params();
  const brandWindows = windowColumns(byBrand, now);
  const brandWhere = visibleSql('q', v, byBrand);
  const brandSql = `SELECT 'brand' AS kind, q.brand_id AS id, MAX(b.name) AS name, NULL AS user_email,
  ${brandWindows}
 FROM query_log q LEFT JOIN brands b ON b.id = q.brand_id
 WHERE ${brandWhere} AND q.created_at > ${byBrand.p(now - 30 * DAY)} AND q.created_at <= ${byBrand.p(now)}
 GROUP BY q.brand_id ORDER BY bytes_30 DESC, runs_30 DESC, q.brand_id`;
  return [
    { sql: callerSql, params: byCaller.values },
    { sql: brandSql, params: byBrand.values },
  ];
}

const TotalsRowSchema = z.object({
  kind: z.string(),
  id: z.string().nullable(),
  name: z.string().nullable(),
  user_email: z.string().nullable(),
  runs_1: z.number().nullable(),
  bytes_1: z.number().nullable(),
  runs_7: z.number().nullable(),
  bytes_7: z.number().nullable(),
  runs_30: z.number().nullable(),
  bytes_30: z.number().nullable(),
});

export function toTotalsRow(raw: unknown, price: number): TotalsRow {
  const r = TotalsRowSchema.parse(raw);
  const w = (runs: number | null, bytes: number | null): WindowTotal => ({
    runs: runs ?? 0,
    bytesBilled: bytes ?? 0,
    costUsd: costUsd(bytes ?? 0, price),
  });
  return {
    kind: r.kind === 'key' ? 'key' : r.kind === 'brand' ? 'brand' : 'connection',
    id: r.id,
    name: r.name,
    userEmail: r.user_email,
    windows: { 1: w(r.runs_1, r.bytes_1), 7: w(r.runs_7, r.bytes_7), 30: w(r.runs_30, r.bytes_30) },
  };
}

/** A connection that ran something visible: the filter pickers' choices of connection and of user. */
export interface ConnectionChoice {
  id: string;
  name: string | null;
  user: { id: string; email: string | null } | null;
}

/** Choices offered per picker; a caller past it is still reachable through the "Open in history" links. */
const PICKER_MAX = 200;

/**
 * Every assistant connection with a visible run, most recently active first (the query_log_principal index walks
 * only connections' rows): what the history's connection and user pickers offer.
 */
export function connectionsStatement(v: Visibility): Statement {
  const params = new Params();
  const visible = visibleSql('q', v, params);
  return {
    sql: `SELECT q.principal_id AS id, MAX(q.client_name) AS name, MAX(q.user_id) AS user_id, MAX(u.email) AS user_email,
  MAX(q.created_at) AS last_at
 FROM query_log q LEFT JOIN users u ON u.id = q.user_id
 WHERE q.principal_kind = 'oauth' AND ${visible}
 GROUP BY q.principal_id ORDER BY last_at DESC LIMIT ${params.p(PICKER_MAX)}`,
    params: params.values,
  };
}

const ConnectionRowSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  user_id: z.string().nullable(),
  user_email: z.string().nullable(),
});

export async function listConnections(env: Env, v: Visibility): Promise<ConnectionChoice[]> {
  const s = connectionsStatement(v);
  const { results } = await env.DB.prepare(s.sql)
    .bind(...s.params)
    .all();
  return results.map((raw) => {
    const r = ConnectionRowSchema.parse(raw);
    return { id: r.id, name: r.name, user: r.user_id === null ? null : { id: r.user_id, email: r.user_email } };
  });
}

/** The connection and user pickers (the inbox has the same two): each connection by name and user; each user by email. */
export function callerPickers(connections: ConnectionChoice[]): FilterField[] {
  const users = new Map<string, string>();
  for (const c of connections) if (c.user) users.set(c.user.id, c.user.email ?? c.user.id);
  return [
    {
      name: 'connection',
      label: 'Assistant connection',
      options: connections.map((c) => ({ value: c.id, label: callerText({ kind: 'connection', ...c }, c.user) })),
    },
    {
      name: 'user',
      label: 'User',
      options: [...users].sort((a, b) => a[1].localeCompare(b[1])).map(([value, label]) => ({ value, label })),
    },
  ];
}

/** Reads a page of runs (one more than `limit` when there are more). */
export async function listRuns(env: Env, v: Visibility, f: HistoryFilter, limit: number): Promise<Run[]> {
  const s = listRunsStatement(v, f, limit);
  const { results } = await env.DB.prepare(s.sql)
    .bind(...s.params)
    .all();
  const price = usdPerTib(env);
  return results.map((r) => toRun(r, price));
}

export async function loadTotals(env: Env, v: Visibility, now: number): Promise<{ callers: TotalsRow[]; brands: TotalsRow[] }> {
  const [a, b] = totalsStatements(v, now);
  const [callers, brands] = await env.DB.batch([env.DB.prepare(a.sql).bind(...a.params), env.DB.prepare(b.sql).bind(...b.params)]);
  const price = usdPerTib(env);
  return {
    callers: (callers?.results ?? []).map((r) => toTotalsRow(r, price)),
    brands: (brands?.results ?? []).map((r) => toTotalsRow(r, price)),
  };
}

const CSV_COLUMNS = [
  'created_at',
  'request_id',
  'transport',
  'caller_kind',
  'caller_id',
  'caller_name',
  'user_email',
  'brand_id',
  'query_id',
  'period_start',
  'period_end',
  'dry_run',
  'outcome',
  'error_code',
  'error_message',
  'rows',
  'bytes_billed',
  'bytes_processed',
  'duration_ms',
  'cost_usd',
  'sql',
] as const;

/**
 * Where a formula lead (`=`, `+`, `-`, `@`, tab, CR) would start a cell: the start of a text field, or right after
 * something a spreadsheet may split a cell at: a list separator (`,`, `;` in much of continental Europe, tab, `|`)
 * or a line break. Zero-width, so a lead that is itself a separator (tab, CR) is caught before the next one too.
 */
const FORMULA_LEAD = /(?<=^|[,;\t|\r\n])(?=[=+\-@\t\r])/g;

/** A number we formatted (digits and a point), written bare. */
interface Digits {
  digits: string;
}

/**
 * One CSV field (RFC 4180). Every text field is quoted, whatever the reader's list separator, and every formula
 * lead at its start or after a separator or line break gets a `'` before it, so no spreadsheet runs any part of it
 * as a formula (OWASP, "CSV Injection"). Numbers and booleans are ours, never caller text, and stay bare.
 */
export function csvField(v: string | number | boolean | Digits | null): string {
  if (v === null) return '';
  if (typeof v === 'object') return v.digits;
  if (typeof v !== 'string') return String(v);
  return `"${v.replace(FORMULA_LEAD, "'").replace(/"/g, '""')}"`;
}

export function csvHeader(): string {
  return `${CSV_COLUMNS.join(',')}\r\n`;
}

export function csvRow(r: Run): string {
  const fields: Parameters<typeof csvField>[0][] = [
    new Date(r.createdAt).toISOString(),
    r.requestId,
    r.transport,
    r.caller.kind,
    r.caller.id,
    r.caller.name,
    r.user?.email ?? null,
    r.brandId,
    r.queryId,
    r.period?.startDate ?? null,
    r.period?.endDate ?? null,
    r.dryRun,
    r.outcome,
    r.errorCode,
    r.errorMessage,
    r.rows,
    r.bytesBilled,
    r.bytesProcessed,
    r.durationMs,
    { digits: r.costUsd.toFixed(6) },
    r.sql,
  ];
  return `${fields.map(csvField).join(',')}\r\n`;
}
