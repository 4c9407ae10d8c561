import { z } from 'zod';
import type { Env } from '../../env';
import type { Statement } from '../memories/store';
import { visibleSql, type Visibility } from '../../auth/ownership';
import { Params, parseFilter, PeriodFilterFields, periodFilterSql } from '../query-history/visibility';

/**
 * The data-issue inbox: reports filed with `POST /v1/data/feedback` or the `report_data_issue` MCP tool, as the data
 * team works them. Pure statement builders and row parsing shared by the admin pages (src/web/pages/inbox.page.tsx)
 * and the admin CLI (`feedback list|show|resolve`), under the visibility rule of src/auth/ownership.ts (visibleSql).
 *
 * Status: open -> acknowledged -> resolved | dismissed (open may go straight to resolved or dismissed). Resolved and
 * dismissed are final. Each change names who made it, carries a note (required to resolve or dismiss) and is
 * recorded in feedback_status_changes in the same transaction as the change itself.
 */

export const FEEDBACK_STATUSES = ['open', 'acknowledged', 'resolved', 'dismissed'] as const;
export type FeedbackStatus = (typeof FEEDBACK_STATUSES)[number];

/** Where each status may go next. */
export const NEXT_STATUSES: Record<FeedbackStatus, readonly FeedbackStatus[]> = {
  open: ['acknowledged', 'resolved', 'dismissed'],
  acknowledged: ['resolved', 'dismissed'],
  resolved: [],
  dismissed: [],
};

export const NOTE_MAX_CHARS = 2_000;
/** Reports per page of the list. */
export const INBOX_PAGE_SIZE = 50;

const IdText = z.string().trim().max(200);

export const InboxFilterSchema = z.object({
  brand: IdText.optional(),
  severity: z.enum(['low', 'medium', 'high']).optional(),
  status: z.enum(FEEDBACK_STATUSES).optional(),
  /** Who filed it: an API key id. */
  key: IdText.optional(),
  /** Who filed it: an assistant connection (OAuth grant id). */
  connection: IdText.optional(),
  /** The user of the connection that filed it. */
  user: IdText.optional(),
  ...PeriodFilterFields,
});
export type InboxFilter = z.infer<typeof InboxFilterSchema>;

export function parseInboxFilter(raw: Record<string, string | undefined>) {
  return parseFilter(InboxFilterSchema, raw);
}

const COLUMNS = `f.id, f.request_id, f.principal_kind, f.principal_id, f.user_id, f.org_id, f.brand_id, f.summary, f.expected,
  f.observed, f.severity, f.transcript, f.recent_queries, f.created_at, f.status, f.status_note, f.status_changed_by,
  f.status_changed_at, k.name AS key_name, u.email AS user_email, b.name AS brand_name,
  (SELECT q.client_name FROM query_log q WHERE f.principal_kind = 'oauth' AND q.principal_kind = 'oauth'
      AND q.principal_id = f.principal_id AND q.client_name IS NOT NULL ORDER BY q.created_at DESC LIMIT 1) AS client_name`;
const JOINS = `FROM feedback f
  LEFT JOIN api_keys k ON f.principal_kind = 'key' AND k.id = f.principal_id
  LEFT JOIN users u ON u.id = f.user_id
  LEFT JOIN brands b ON b.id = f.brand_id`;

export function listFeedbackStatement(v: Visibility, f: InboxFilter, limit: number): Statement {
  const params = new Params();
  const where = [visibleSql('f', v, params)];
  if (f.brand) where.push(`f.brand_id = ${params.p(f.brand)}`);
  if (f.severity) where.push(`f.severity = ${params.p(f.severity)}`);
  if (f.status) where.push(`f.status = ${params.p(f.status)}`);
  if (f.key) where.push(`f.principal_kind = 'key' AND f.principal_id = ${params.p(f.key)}`);
  if (f.connection) where.push(`f.principal_kind = 'oauth' AND f.principal_id = ${params.p(f.connection)}`);
  if (f.user) where.push(`f.user_id = ${params.p(f.user)}`);
  where.push(...periodFilterSql('f', f, params));
  return {
    sql: `SELECT ${COLUMNS} ${JOINS}
 WHERE ${where.join('\n   AND ')}
 ORDER BY f.created_at DESC, f.id DESC LIMIT ${params.p(limit)}`,
    params: params.values,
  };
}

/** One report, if visible; then its status changes, then its webhook delivery attempts (three statements). */
export function feedbackDetailStatements(v: Visibility, id: string): [Statement, Statement, Statement] {
  const params = new Params();
  const idParam = params.p(id); // ?1
  const visible = visibleSql('f', v, params);
  const one: Statement = { sql: `SELECT ${COLUMNS} ${JOINS} WHERE f.id = ${idParam} AND ${visible}`, params: params.values };
  // The history rows are read under the same condition (?1 is the report's id), so an invisible report shows nothing.
  const changes: Statement = {
    sql: `SELECT c.from_status, c.to_status, c.note, c.actor_kind, c.actor_name, c.created_at FROM feedback_status_changes c
  WHERE c.feedback_id = ?1 AND EXISTS (SELECT 1 FROM feedback f WHERE f.id = c.feedback_id AND ${visible})
  ORDER BY c.created_at, c.id`,
    params: one.params,
  };
  const deliveries: Statement = {
    sql: `SELECT d.attempt, d.outcome, d.http_status, d.error, d.duration_ms, d.created_at FROM webhook_deliveries d
  WHERE d.feedback_id = ?1 AND EXISTS (SELECT 1 FROM feedback f WHERE f.id = d.feedback_id AND ${visible})
  ORDER BY d.attempt, d.created_at`,
    params: one.params,
  };
  return [one, changes, deliveries];
}

/** Who changes a status: an administrator on the pages, or the admin CLI. */
export interface StatusActor {
  kind: 'user' | 'cli';
  id: string | null;
  name: string;
}

/**
 * A status change as two statements for one batch (a transaction): the history row, inserted only when the
 * report is visible and still in `from`, then the change, applied only if that history row exists. A change that
 * lost a race (someone else moved the report first) or is not the caller's to make changes nothing.
 */
export function changeStatusStatements(
  v: Visibility,
  change: { id: string; changeId: string; from: FeedbackStatus; to: FeedbackStatus; note: string | null; actor: StatusActor; now: number },
): [Statement, Statement] {
  const params = new Params();
  const changeId = params.p(change.changeId);
  const id = params.p(change.id);
  const from = params.p(change.from);
  const to = params.p(change.to);
  const note = params.p(change.note);
  const actorKind = params.p(change.actor.kind);
  const actorId = params.p(change.actor.id);
  const actorName = params.p(change.actor.name);
  const now = params.p(change.now);
  const visible = visibleSql('f', v, params);
  const insert: Statement = {
    sql: `INSERT INTO feedback_status_changes (id, feedback_id, from_status, to_status, note, actor_kind, actor_id, actor_name, created_at)
 SELECT ${changeId}, f.id, f.status, ${to}, ${note}, ${actorKind}, ${actorId}, ${actorName}, ${now}
   FROM feedback f WHERE f.id = ${id} AND f.status = ${from} AND ${visible}`,
    params: params.values,
  };
  const update: Statement = {
    sql: `UPDATE feedback SET status = ?4, status_note = ?5, status_changed_by = ?8, status_changed_at = ?9
 WHERE id = ?2 AND status = ?3 AND EXISTS (SELECT 1 FROM feedback_status_changes WHERE id = ?1)`,
    params: params.values.slice(0, 9),
  };
  return [insert, update];
}

/** Why a status change was refused, or null when `from -> to` with `note` is allowed. */
export function statusChangeProblem(from: FeedbackStatus, to: FeedbackStatus, note: string | null): string | null {
  if (!NEXT_STATUSES[from].includes(to)) {
    return NEXT_STATUSES[from].length === 0
      ? `the report is already ${from}; it cannot change any more`
      : `a report that is ${from} can become ${NEXT_STATUSES[from].join(' or ')}, not ${to}`;
  }
  if ((to === 'resolved' || to === 'dismissed') && (note === null || note.trim() === '')) {
    return `say why in a note to mark the report ${to}`;
  }
  if (note !== null && note.length > NOTE_MAX_CHARS) return `the note must be at most ${NOTE_MAX_CHARS} characters`;
  return null;
}

const TurnSchema = z.object({ role: z.string(), content: z.string() });
const AttachedQuerySchema = z.object({
  id: z.string().optional(),
  requestId: z.string(),
  brandId: z.string().nullable(),
  queryId: z.string().nullable(),
  period: z.object({ startDate: z.string(), endDate: z.string() }).nullable(),
  sql: z.string().nullable(),
  dryRun: z.boolean(),
  transport: z.string(),
  outcome: z.string(),
  bytesProcessed: z.number().nullable(),
  bytesBilled: z.number().nullable(),
  rowCount: z.number().nullable(),
  durationMs: z.number().nullable(),
  createdAt: z.number(),
});
export type AttachedQuery = z.infer<typeof AttachedQuerySchema>;

const FeedbackRowSchema = z.object({
  id: z.string(),
  request_id: z.string(),
  principal_kind: z.string(),
  principal_id: z.string(),
  user_id: z.string().nullable(),
  org_id: z.string().nullable(),
  brand_id: z.string().nullable(),
  summary: z.string(),
  expected: z.string().nullable(),
  observed: z.string().nullable(),
  severity: z.enum(['low', 'medium', 'high']).nullable(),
  transcript: z.string().nullable(),
  recent_queries: z.string(),
  created_at: z.number(),
  status: z.enum(FEEDBACK_STATUSES),
  status_note: z.string().nullable(),
  status_changed_by: z.string().nullable(),
  status_changed_at: z.number().nullable(),
  key_name: z.string().nullable(),
  user_email: z.string().nullable(),
  brand_name: z.string().nullable(),
  /** The assistant's name, as its connection's runs logged it (a report row does not carry it). */
  client_name: z.string().nullable(),
});

export interface FeedbackItem {
  id: string;
  requestId: string;
  filer: { kind: 'key' | 'connection'; id: string; name: string | null };
  user: { id: string; email: string | null } | null;
  orgId: string | null;
  brand: { id: string; name: string | null } | null;
  summary: string;
  expected: string | null;
  observed: string | null;
  severity: 'low' | 'medium' | 'high' | null;
  transcript: { role: string; content: string }[];
  recentQueries: AttachedQuery[];
  createdAt: number;
  status: FeedbackStatus;
  statusNote: string | null;
  statusChangedBy: string | null;
  statusChangedAt: number | null;
}

function parseJsonArray<T>(text: string | null, schema: z.ZodType<T>): T[] {
  if (text === null) return [];
  const parsed = z.array(schema).safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : [];
}

export function toFeedbackItem(raw: unknown): FeedbackItem {
  const r = FeedbackRowSchema.parse(raw);
  return {
    id: r.id,
    requestId: r.request_id,
    filer:
      r.principal_kind === 'key'
        ? { kind: 'key', id: r.principal_id, name: r.key_name }
        : { kind: 'connection', id: r.principal_id, name: r.client_name },
    user: r.user_id === null ? null : { id: r.user_id, email: r.user_email },
    orgId: r.org_id,
    brand: r.brand_id === null ? null : { id: r.brand_id, name: r.brand_name },
    summary: r.summary,
    expected: r.expected,
    observed: r.observed,
    severity: r.severity,
    transcript: parseJsonArray(r.transcript, TurnSchema),
    recentQueries: parseJsonArray(r.recent_queries, AttachedQuerySchema),
    createdAt: r.created_at,
    status: r.status,
    statusNote: r.status_note,
    statusChangedBy: r.status_changed_by,
    statusChangedAt: r.status_changed_at,
  };
}

const StatusChangeRowSchema = z.object({
  from_status: z.string(),
  to_status: z.string(),
  note: z.string().nullable(),
  actor_kind: z.string(),
  actor_name: z.string(),
  created_at: z.number(),
});
export interface StatusChange {
  from: string;
  to: string;
  note: string | null;
  actorKind: string;
  actorName: string;
  at: number;
}
export function toStatusChange(raw: unknown): StatusChange {
  const r = StatusChangeRowSchema.parse(raw);
  return { from: r.from_status, to: r.to_status, note: r.note, actorKind: r.actor_kind, actorName: r.actor_name, at: r.created_at };
}

const DeliveryRowSchema = z.object({
  attempt: z.number(),
  outcome: z.enum(['delivered', 'failed', 'gave_up']),
  http_status: z.number().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number(),
  created_at: z.number(),
});
export interface Delivery {
  attempt: number;
  outcome: 'delivered' | 'failed' | 'gave_up';
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  at: number;
}
export function toDelivery(raw: unknown): Delivery {
  const r = DeliveryRowSchema.parse(raw);
  return { attempt: r.attempt, outcome: r.outcome, httpStatus: r.http_status, error: r.error, durationMs: r.duration_ms, at: r.created_at };
}

export async function listFeedback(env: Env, v: Visibility, f: InboxFilter, limit: number): Promise<FeedbackItem[]> {
  const s = listFeedbackStatement(v, f, limit);
  const { results } = await env.DB.prepare(s.sql)
    .bind(...s.params)
    .all();
  return results.map(toFeedbackItem);
}

export interface FeedbackDetail {
  item: FeedbackItem;
  changes: StatusChange[];
  deliveries: Delivery[];
}

export async function loadFeedbackDetail(env: Env, v: Visibility, id: string): Promise<FeedbackDetail | null> {
  const [one, changes, deliveries] = feedbackDetailStatements(v, id).map((s) => env.DB.prepare(s.sql).bind(...s.params));
  const [a, b, c] = await env.DB.batch([one!, changes!, deliveries!]);
  const row = a?.results[0];
  if (row === undefined) return null;
  return { item: toFeedbackItem(row), changes: (b?.results ?? []).map(toStatusChange), deliveries: (c?.results ?? []).map(toDelivery) };
}

/**
 * Applies a status change (see changeStatusStatements). `changed` false: the report was not visible, or was no
 * longer in `from` (someone changed it first).
 */
export async function changeFeedbackStatus(
  env: Env,
  v: Visibility,
  change: Parameters<typeof changeStatusStatements>[1],
): Promise<boolean> {
  const [insert, update] = changeStatusStatements(v, change);
  const [, res] = await env.DB.batch([
    env.DB.prepare(insert.sql).bind(...insert.params),
    env.DB.prepare(update.sql).bind(...update.params),
  ]);
  return (res?.meta.changes ?? 0) === 1;
}
