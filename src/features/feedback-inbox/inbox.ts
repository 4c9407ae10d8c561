import { z } from 'zod';
import type { Env } from '../../env';
import type { Statement } from '../memories/store';
import { visibleSql, type Visibility } from '../../auth/ownership';
import { Params, parseFilter, PeriodFilterFields, periodFilterSql } from '../query-history/visibility';
import { queryLogSchemaOf, queryLogJsonSql, StoredPeriodSchema, type QueryLogField } from '../query/query-log';

/**
 * The data-issue inbox: reports filed with `POST /v1/data/feedback` or the `report_data_issue` MCP tool, as the data
 * team works them. Pure statement builders and row parsing shared by the admin pages (src/web/pages/inbox.page.tsx)
 * and the admin CLI (`feedback list|show|resolve`), under the visibility rule of src/auth/ownership.ts (visibleSql).
 *
 * Status: open -> acknowledged -> resolved | dismissed (open may go straight to resolved or dismissed); a resolved or
 * dismissed report can be reopened (back to open, with a note saying why). Each change names who made it, carries a
 * note (required to resolve, dismiss or reopen) and is recorded in feedback_status_changes in the same transaction as
 * the change itself. A note without a change and an assignment are rows there too (from_status = to_status).
 */

export const FEEDBACK_STATUSES = ['open', 'acknowledged', 'resolved', 'dismissed'] as const;
export type FeedbackStatus = (typeof FEEDBACK_STATUSES)[number];

/** Where each status may go next. */
export const NEXT_STATUSES: Record<FeedbackStatus, readonly FeedbackStatus[]> = {
  open: ['acknowledged', 'resolved', 'dismissed'],
  acknowledged: ['resolved', 'dismissed'],
  resolved: ['open'],
  dismissed: ['open'],
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
  /** The administrator it is assigned to (a user id), or `none` for the unassigned. */
  assignee: IdText.optional(),
  ...PeriodFilterFields,
});
export type InboxFilter = z.infer<typeof InboxFilterSchema>;

export function parseInboxFilter(raw: Record<string, string | undefined>) {
  return parseFilter(InboxFilterSchema, raw);
}

const COLUMNS = `f.id, f.request_id, f.principal_kind, f.principal_id, f.user_id, f.org_id, f.brand_id, f.summary, f.expected,
  f.observed, f.severity, f.transcript, f.recent_queries, f.created_at, f.status, f.status_note, f.status_changed_by,
  f.status_changed_at, k.name AS key_name, u.email AS user_email, b.name AS brand_name, f.assignee_user_id,
  a.email AS assignee_email,
  (SELECT q.client_name FROM query_log q WHERE f.principal_kind = 'oauth' AND q.principal_kind = 'oauth'
      AND q.principal_id = f.principal_id AND q.client_name IS NOT NULL ORDER BY q.created_at DESC LIMIT 1) AS client_name`;
const JOINS = `FROM feedback f
  LEFT JOIN api_keys k ON f.principal_kind = 'key' AND k.id = f.principal_id
  LEFT JOIN users u ON u.id = f.user_id
  LEFT JOIN brands b ON b.id = f.brand_id
  LEFT JOIN users a ON a.id = f.assignee_user_id`;

/** What a report keeps of each attached query_log row (feedback.recent_queries' items). */
const ATTACHED_FIELDS = [
  'id',
  'requestId',
  'brandId',
  'queryId',
  'period',
  'sql',
  'dryRun',
  'transport',
  'outcome',
  'bytesProcessed',
  'bytesBilled',
  'rowCount',
  'durationMs',
  'createdAt',
] as const satisfies readonly QueryLogField[];

/** One query_log row (alias q) as an attached query: the shape of feedback.recent_queries' items. */
export const ATTACHED_QUERY_JSON = queryLogJsonSql('q', ATTACHED_FIELDS);

/** How much of the filer's query log a report attaches: its last 20 runs from the 24 h before filing. */
export const FEEDBACK_AUDIT = { rows: 20, windowMs: 24 * 60 * 60 * 1000 } as const;

/**
 * The filer's runs from before filing that reached the log after it (the log is written through a queue, up to a
 * second or so late: a run 0.9 s before filing was missed by the snapshot taken at filing) and are not in the
 * snapshot: read with the report, merged by toFeedbackItem. Rows the log has since dropped stay in the snapshot.
 */
const LATE_QUERIES = `(SELECT json_group_array(json(obj)) FROM (
    SELECT ${ATTACHED_QUERY_JSON} AS obj FROM query_log q
     WHERE q.principal_kind = f.principal_kind AND q.principal_id = f.principal_id
       AND q.created_at > f.created_at - ${FEEDBACK_AUDIT.windowMs} AND q.created_at <= f.created_at
       AND (f.brand_id IS NULL OR q.brand_id = f.brand_id)
       AND q.id NOT IN (SELECT json_extract(value, '$.id') FROM json_each(f.recent_queries) WHERE json_extract(value, '$.id') IS NOT NULL)
     ORDER BY q.created_at DESC, q.id DESC LIMIT ${FEEDBACK_AUDIT.rows})) AS late_queries`;

export function listFeedbackStatement(v: Visibility, f: InboxFilter, limit: number): Statement {
  const params = new Params();
  const where = [visibleSql('f', v, params)];
  if (f.brand) where.push(`f.brand_id = ${params.p(f.brand)}`);
  if (f.severity) where.push(`f.severity = ${params.p(f.severity)}`);
  if (f.status) where.push(`f.status = ${params.p(f.status)}`);
  if (f.key) where.push(`f.principal_kind = 'key' AND f.principal_id = ${params.p(f.key)}`);
  if (f.connection) where.push(`f.principal_kind = 'oauth' AND f.principal_id = ${params.p(f.connection)}`);
  if (f.user) where.push(`f.user_id = ${params.p(f.user)}`);
  if (f.assignee === 'none') where.push('f.assignee_user_id IS NULL');
  else if (f.assignee) where.push(`f.assignee_user_id = ${params.p(f.assignee)}`);
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
  const one: Statement = {
    sql: `SELECT ${COLUMNS}, ${LATE_QUERIES} ${JOINS} WHERE f.id = ${idParam} AND ${visible}`,
    params: params.values,
  };
  // The history rows are read under the same condition (?1 is the report's id), so an invisible report shows nothing.
  const changes: Statement = {
    sql: `SELECT c.from_status, c.to_status, c.note, c.actor_kind, c.actor_name, c.created_at, c.kind FROM feedback_status_changes c
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

/**
 * A note on a report without a change of status (or an assignment, below): one history row with from = to = the
 * report's status, inserted only when the report is visible and, when `status` is given, still in it (as the page
 * showed it).
 */
export function noteStatement(
  v: Visibility,
  n: {
    id: string;
    changeId: string;
    status: FeedbackStatus | null;
    note: string;
    actor: StatusActor;
    now: number;
    kind?: 'note' | 'assign';
  },
): Statement {
  const params = new Params();
  const cols = [n.changeId, n.note, n.actor.kind, n.actor.id, n.actor.name, n.now, n.kind ?? 'note'].map((x) => params.p(x));
  const where = [`f.id = ${params.p(n.id)}`, visibleSql('f', v, params)];
  if (n.status !== null) where.push(`f.status = ${params.p(n.status)}`);
  return {
    sql: `INSERT INTO feedback_status_changes
        (id, feedback_id, from_status, to_status, note, actor_kind, actor_id, actor_name, created_at, kind)
 SELECT ${cols[0]}, f.id, f.status, f.status, ${cols.slice(1).join(', ')}
   FROM feedback f WHERE ${where.join(' AND ')}`,
    params: params.values,
  };
}

/**
 * Assigning a report (or unassigning it, `assignee` null): the history row (its note says to whom), then the change,
 * applied only if that row was written (the report visible to the actor). The assignee must be an administrator who
 * can see the report: the caller checks it with assigneesStatement.
 */
export function assignStatements(
  v: Visibility,
  a: { id: string; changeId: string; assignee: { id: string; email: string } | null; actor: StatusActor; now: number },
): [Statement, Statement] {
  const note = a.assignee === null ? 'Unassigned' : `Assigned to ${a.assignee.email}`;
  // Any status: the note is about the assignment, not a state the page showed.
  const insert = noteStatement(v, { id: a.id, changeId: a.changeId, status: null, note, actor: a.actor, now: a.now, kind: 'assign' });
  const update: Statement = {
    sql: 'UPDATE feedback SET assignee_user_id = ?1 WHERE id = ?2 AND EXISTS (SELECT 1 FROM feedback_status_changes WHERE id = ?3)',
    params: [a.assignee?.id ?? null, a.id, a.changeId],
  };
  return [insert, update];
}

/**
 * The administrators a report of `orgId` / `brandId` can be assigned to: members of its org, or of its brand (who
 * see it on the pages under the visibility rule).
 */
export function assigneesStatement(orgId: string | null, brandId: string | null): Statement {
  return {
    sql: `SELECT DISTINCT u.id, u.email FROM users u JOIN memberships m ON m.user_id = u.id
 WHERE (m.org_id IS NOT NULL AND m.org_id = COALESCE((SELECT org_id FROM brands WHERE id = ?2), ?1))
    OR (m.brand_id IS NOT NULL AND m.brand_id = ?2)
 ORDER BY u.email`,
    params: [orgId, brandId],
  };
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
  if (to === 'open' && (note === null || note.trim() === '')) return 'say why in a note to reopen the report';
  if (note !== null && note.length > NOTE_MAX_CHARS) return `the note must be at most ${NOTE_MAX_CHARS} characters`;
  return null;
}

const TurnSchema = z.object({ role: z.string(), content: z.string() });
/** An attached query as ATTACHED_QUERY_JSON stores it (reports filed before the row id was kept lack `id`). */
export const AttachedQuerySchema = queryLogSchemaOf(ATTACHED_FIELDS).extend({
  id: z.string().optional(),
  period: StoredPeriodSchema.nullable(),
  dryRun: z.boolean(),
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
  assignee_user_id: z.string().nullable(),
  assignee_email: z.string().nullable(),
  /** Detail reads only (LATE_QUERIES). */
  late_queries: z.string().nullable().optional(),
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
  assignee: { id: string; email: string | null } | null;
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
    recentQueries: attached(r.recent_queries, r.late_queries ?? null),
    createdAt: r.created_at,
    status: r.status,
    statusNote: r.status_note,
    statusChangedBy: r.status_changed_by,
    statusChangedAt: r.status_changed_at,
    assignee: r.assignee_user_id === null ? null : { id: r.assignee_user_id, email: r.assignee_email },
  };
}

/** The snapshot taken at filing plus the runs that reached the log late, newest first, at most FEEDBACK_AUDIT.rows. */
function attached(snapshot: string, late: string | null): AttachedQuery[] {
  const all = [...parseJsonArray(snapshot, AttachedQuerySchema), ...parseJsonArray(late, AttachedQuerySchema)];
  return all.sort((a, b) => b.createdAt - a.createdAt || (b.id ?? '').localeCompare(a.id ?? '')).slice(0, FEEDBACK_AUDIT.rows);
}

const StatusChangeRowSchema = z.object({
  from_status: z.string(),
  to_status: z.string(),
  note: z.string().nullable(),
  actor_kind: z.string(),
  actor_name: z.string(),
  created_at: z.number(),
  /** Absent from rows read by an older CLI statement. */
  kind: z.enum(['status', 'note', 'assign']).optional(),
});
export interface StatusChange {
  kind: 'status' | 'note' | 'assign';
  from: string;
  to: string;
  note: string | null;
  actorKind: string;
  actorName: string;
  at: number;
}
export function toStatusChange(raw: unknown): StatusChange {
  const r = StatusChangeRowSchema.parse(raw);
  return {
    kind: r.kind ?? 'status',
    from: r.from_status,
    to: r.to_status,
    note: r.note,
    actorKind: r.actor_kind,
    actorName: r.actor_name,
    at: r.created_at,
  };
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

/** Adds a note without a change of status (noteStatement); false when the report moved on or is not visible. */
export async function addFeedbackNote(env: Env, v: Visibility, n: Parameters<typeof noteStatement>[1]): Promise<boolean> {
  const st = noteStatement(v, n);
  const res = await env.DB.prepare(st.sql)
    .bind(...st.params)
    .run();
  return res.meta.changes === 1;
}

/** Assigns (or unassigns) a report (assignStatements), in one transaction. */
export async function assignFeedback(env: Env, v: Visibility, a: Parameters<typeof assignStatements>[1]): Promise<boolean> {
  const [insert, update] = assignStatements(v, a);
  const [, res] = await env.DB.batch([
    env.DB.prepare(insert.sql).bind(...insert.params),
    env.DB.prepare(update.sql).bind(...update.params),
  ]);
  return (res?.meta.changes ?? 0) === 1;
}

/** Who a report can be assigned to (assigneesStatement). */
export async function listAssignees(env: Env, item: Pick<FeedbackItem, 'orgId' | 'brand'>): Promise<{ id: string; email: string }[]> {
  const st = assigneesStatement(item.orgId, item.brand?.id ?? null);
  const { results } = await env.DB.prepare(st.sql)
    .bind(...st.params)
    .all<{ id: string; email: string }>();
  return results;
}
