import { z } from 'zod';
import type { Principal } from '../../auth/principal';
import type { Env } from '../../env';
import { ApiError } from '../../errors';
import { visibleSql, type Visibility } from '../../auth/ownership';

/**
 * The durable record of a long query (table `query_jobs`, migration 0012): who owns it, which BigQuery job it is,
 * where it stands and what it billed. D1, not a Durable Object's own storage, because the console lists jobs across
 * keys and brands, and any isolate serving a poll reads the same row (docs/architecture.md). Every state change is
 * a conditional UPDATE, so of two isolates (a poll and the job's alarm) racing to end a job exactly one does.
 */

export const JOB_STATUSES = ['running', 'cancelling', 'done', 'failed', 'cancelled', 'expired'] as const;
export type JobState = (typeof JOB_STATUSES)[number];
/** States in which BigQuery may still be running the job (and its bill is not settled). */
const LIVE: readonly JobState[] = ['running', 'cancelling'];

const n = z.number().nullable();
const s = z.string().nullable();
const JobRowSchema = z.object({
  id: z.string(),
  principal_kind: z.enum(['key', 'oauth']),
  principal_id: z.string(),
  org_id: s,
  user_id: s,
  client_name: s,
  brand_id: z.string(),
  query_id: s,
  period: s,
  sql: z.string(),
  transport: z.enum(['rest', 'mcp']),
  request_id: z.string(),
  bq_job_id: z.string(),
  bq_location: z.string(),
  status: z.enum(JOB_STATUSES),
  cancel_reason: z.enum(['caller', 'deadline']).nullable(),
  ticket_id: s,
  reserved_bytes: z.number(),
  estimate_bytes: z.number(),
  bytes_processed: n,
  bytes_billed: n,
  total_rows: n,
  error_code: s,
  error_message: s,
  created_at: z.number(),
  deadline_at: z.number(),
  ended_at: n,
  settled_at: n,
  result_expires_at: z.number(),
});
export type JobRow = z.infer<typeof JobRowSchema>;

export function isLive(row: Pick<JobRow, 'status'>): boolean {
  return LIVE.includes(row.status);
}

/** The poll interval suggested to a caller (MCP pollInterval, REST Retry-After), in ms. */
export function pollAfterMs(row: JobRow, now: number): number {
  const elapsed = now - row.created_at;
  return elapsed < 30_000 ? 2_000 : elapsed < 300_000 ? 5_000 : 15_000;
}

/** A key's long-run settings (its own, else the Worker's defaults); OAuth connections take the defaults. */
export interface JobLimits {
  maxRunningJobs: number;
  jobTimeoutMs: number;
}

/** The principal's long-run settings, resolved with the others when the key was read (its own, else the defaults). */
export function jobLimits(principal: Principal): JobLimits {
  return { maxRunningJobs: principal.limits.maxRunningJobs, jobTimeoutMs: principal.limits.jobTimeoutMs };
}

/** Jobs of this principal that BigQuery may still be running. */
export async function runningJobs(env: Env, principal: Pick<Principal, 'kind' | 'id'>): Promise<number> {
  const row = await env.DB.prepare(
    "SELECT COUNT(*) AS n FROM query_jobs WHERE principal_kind = ? AND principal_id = ? AND status IN ('running', 'cancelling')",
  )
    .bind(principal.kind, principal.id)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** The refusal of a long run past the key's running-jobs limit (429, like the other per-key limits). */
export function tooManyRunning(limits: JobLimits): ApiError {
  return new ApiError(
    'USAGE_LIMIT_EXCEEDED',
    `this key already has ${limits.maxRunningJobs} long queries running (its limit); wait for one to finish or cancel one`,
    {
      details: { limit: 'runningJobs', limitValue: limits.maxRunningJobs, retryAfterSeconds: 5 },
      headers: { 'Retry-After': '5' },
    },
  );
}

export type NewJob = Omit<
  JobRow,
  | 'status'
  | 'cancel_reason'
  | 'bytes_processed'
  | 'bytes_billed'
  | 'total_rows'
  | 'error_code'
  | 'error_message'
  | 'ended_at'
  | 'settled_at'
>;

const COLUMNS = Object.keys(JobRowSchema.shape);

/**
 * Records a new running job, unless its owner already has `maxRunning` live ones (checked in the same statement, so
 * two starts racing cannot both pass). False when refused.
 */
export async function insertJob(env: Env, job: NewJob, maxRunning: number): Promise<boolean> {
  const row: JobRow = {
    ...job,
    status: 'running',
    cancel_reason: null,
    bytes_processed: null,
    bytes_billed: null,
    total_rows: null,
    error_code: null,
    error_message: null,
    ended_at: null,
    settled_at: null,
  };
  const values = COLUMNS.map((c) => row[c as keyof JobRow]);
  const res = await env.DB.prepare(
    `INSERT INTO query_jobs (${COLUMNS.join(', ')}) SELECT ${COLUMNS.map(() => '?').join(', ')}
     WHERE (SELECT COUNT(*) FROM query_jobs WHERE principal_kind = ? AND principal_id = ? AND status IN ('running', 'cancelling')) < ?`,
  )
    .bind(...values, job.principal_kind, job.principal_id, maxRunning)
    .run();
  return res.meta.changes === 1;
}

export async function readJob(env: Env, id: string): Promise<JobRow | null> {
  const raw = await env.DB.prepare(`SELECT ${COLUMNS.join(', ')} FROM query_jobs WHERE id = ?`)
    .bind(id)
    .first();
  return raw ? JobRowSchema.parse(raw) : null;
}

/**
 * The job `id` if `principal` owns it. Another key's or connection's job is the same 404 as one that never existed:
 * its existence is not told.
 */
export async function ownJob(env: Env, principal: Pick<Principal, 'kind' | 'id'>, id: string): Promise<JobRow> {
  const row = /^qj_[0-9a-f]{20}$/.test(id) ? await readJob(env, id) : null;
  if (!row || row.principal_kind !== principal.kind || row.principal_id !== principal.id) {
    throw new ApiError(
      'JOB_NOT_FOUND',
      `no long query ${JSON.stringify(id)} for these credentials (jobs are readable by their owner only)`,
    );
  }
  return row;
}

/** running -> cancelling: the cancel was sent (by the caller, or past the deadline). False if it was no longer running. */
export async function markCancelling(env: Env, id: string, reason: 'caller' | 'deadline'): Promise<boolean> {
  const res = await env.DB.prepare("UPDATE query_jobs SET status = 'cancelling', cancel_reason = ? WHERE id = ? AND status = 'running'")
    .bind(reason, id)
    .run();
  return res.meta.changes === 1;
}

/** Progress of a live job (bytes BigQuery reports processed so far). */
export async function recordProgress(env: Env, id: string, bytesProcessed: number): Promise<void> {
  await env.DB.prepare("UPDATE query_jobs SET bytes_processed = ? WHERE id = ? AND status IN ('running', 'cancelling')")
    .bind(bytesProcessed, id)
    .run();
}

export interface JobEnd {
  status: Exclude<JobState, 'running' | 'cancelling'>;
  bytesProcessed: number | null;
  bytesBilled: number;
  totalRows: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  at: number;
}

/**
 * Ends a live job. True for the one caller whose update ended it: that caller, and only it, settles the bill and
 * writes the log row.
 */
export async function endJob(env: Env, id: string, end: JobEnd): Promise<boolean> {
  const res = await env.DB.prepare(
    `UPDATE query_jobs SET status = ?, bytes_processed = COALESCE(?, bytes_processed), bytes_billed = ?, total_rows = ?,
       error_code = ?, error_message = ?, ended_at = ?, settled_at = ?
     WHERE id = ? AND status IN ('running', 'cancelling')`,
  )
    .bind(end.status, end.bytesProcessed, end.bytesBilled, end.totalRows, end.errorCode, end.errorMessage, end.at, end.at, id)
    .run();
  return res.meta.changes === 1;
}

/** A finished job's row count, learned when its result is first read. */
export async function recordTotalRows(env: Env, id: string, totalRows: number): Promise<void> {
  await env.DB.prepare('UPDATE query_jobs SET total_rows = ? WHERE id = ? AND total_rows IS NULL').bind(totalRows, id).run();
}

/** Running and recent jobs an administrator may see (the history's rule, visibleSql), running first, newest first. */
export async function listVisibleJobs(env: Env, v: Visibility, limit: number): Promise<JobRow[]> {
  const values: string[] = [];
  const where = visibleSql('j', v, { p: (value) => (values.push(value), '?') });
  const { results } = await env.DB.prepare(
    `SELECT ${COLUMNS.map((c) => `j.${c}`).join(', ')} FROM query_jobs j WHERE ${where}
     ORDER BY j.status IN ('running', 'cancelling') DESC, j.created_at DESC, j.id LIMIT ?`,
  )
    .bind(...values, limit)
    .all();
  return results.map((r) => JobRowSchema.parse(r));
}

/** One job an administrator may see, or null. */
export async function visibleJob(env: Env, v: Visibility, id: string): Promise<JobRow | null> {
  const values: string[] = [id];
  const where = visibleSql('j', v, { p: (value) => (values.push(value), '?') });
  const raw = await env.DB.prepare(`SELECT ${COLUMNS.map((c) => `j.${c}`).join(', ')} FROM query_jobs j WHERE j.id = ? AND ${where}`)
    .bind(...values)
    .first();
  return raw ? JobRowSchema.parse(raw) : null;
}

/** A principal's own jobs, newest first (MCP 2025 `tasks/list`): `limit` of them from `offset`. */
export async function listOwnJobs(env: Env, principal: Pick<Principal, 'kind' | 'id'>, offset: number, limit: number): Promise<JobRow[]> {
  const { results } = await env.DB.prepare(
    `SELECT ${COLUMNS.join(', ')} FROM query_jobs WHERE principal_kind = ? AND principal_id = ?
     ORDER BY created_at DESC, id LIMIT ? OFFSET ?`,
  )
    .bind(principal.kind, principal.id, limit, offset)
    .all();
  return results.map((r) => JobRowSchema.parse(r));
}

/** The jobs one request of a principal started (a show_report task's sections), oldest first. */
export async function jobsOfRequest(env: Env, principal: Pick<Principal, 'kind' | 'id'>, requestId: string): Promise<JobRow[]> {
  const { results } = await env.DB.prepare(
    `SELECT ${COLUMNS.join(', ')} FROM query_jobs WHERE principal_kind = ? AND principal_id = ? AND request_id = ? ORDER BY created_at, id`,
  )
    .bind(principal.kind, principal.id, requestId)
    .all();
  return results.map((r) => JobRowSchema.parse(r));
}
