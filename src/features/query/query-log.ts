import { z } from 'zod';
import { configOf, type Env } from '../../env';
import { describeError } from '../../errors';
import type { Logger } from '../../lib/log';

/**
 * The query log's writes: one row per run (run-query.ts builds it after the response, in waitUntil).
 *
 * QUERY_LOG_DELIVERY (wrangler.toml) chooses how the row reaches D1:
 * - `queue` (default): the row is sent to the QUERY_LOG queue and the Worker's own consumer writes each batch (up
 *   to 100 rows) in one D1 batch. bench/query-log.mjs measured one INSERT per run as the limit at a few hundred runs
 *   a second (D1 runs one query at a time) and a batched row at about a quarter of its cost. Nothing is lost: a send
 *   that fails falls back to the direct INSERT; a batch that fails is retried by the queue; a redelivered row is not
 *   written twice (`ON CONFLICT (id) DO NOTHING`); after the last retry every row is logged in full. A row reaches
 *   the log up to about a second (max_batch_timeout) after its run.
 * - `direct`: one INSERT per run, at once (the tests that read the log right after a request use it).
 */

const n = z.number().nullable();
const s = z.string().nullable();

/**
 * query_log's row, the one definition: each field in camelCase, its column the same name in snake_case
 * (`requestId` is `request_id`). The queue's messages, the INSERT, and every reader (history, the inbox's and the
 * reports' attached runs) are derived from it; migrations/ and schema.sql hold the table.
 */
const QueryLogFields = {
  id: z.string(),
  requestId: z.string(),
  principalKind: z.string(),
  principalId: z.string(),
  orgId: s,
  userId: s,
  brandId: s,
  queryId: s,
  /** JSON text of the period, as stored. */
  period: s,
  sql: s,
  dryRun: z.union([z.literal(0), z.literal(1)]),
  transport: z.string(),
  outcome: z.string(),
  bytesProcessed: n,
  bytesBilled: n,
  rowCount: n,
  durationMs: n,
  createdAt: z.number(),
  // Added by migration 0008. Optional, so a row queued by a Worker deployed before them still parses.
  /** The caller-facing message of a refused or failed run (bounded; never internal detail). */
  errorMessage: s.optional(),
  /** The assistant (OAuth client name) a connection's run came from. */
  clientName: s.optional(),
  /** BigQuery's ids of the execution, to reconcile with the bill. */
  bqJobId: s.optional(),
  bqLocation: s.optional(),
  bqQueryId: s.optional(),
  /** The long (asynchronous) run's handle. */
  asyncJobId: s.optional(),
};
export type QueryLogField = keyof typeof QueryLogFields;
const FIELDS = Object.keys(QueryLogFields) as QueryLogField[];

/** The columns of a query_log row, in camelCase (also what a SELECT through queryLogColumnsSql returns). */
export const QueryLogSchema = z.object(QueryLogFields);
/** One row as it travels on the queue: the columns, tagged. */
export const QueryLogRowSchema = QueryLogSchema.extend({ kind: z.literal('query-log') });
export type QueryLogRow = z.infer<typeof QueryLogRowSchema>;

/** A stored period (the `period` column's JSON text, once resolved): both dates, inclusive. */
export const StoredPeriodSchema = z.object({ startDate: z.string(), endDate: z.string() });
export type StoredPeriod = z.infer<typeof StoredPeriodSchema>;

/** The `period` column's text as a period; null for none or for text that is not one. */
export function parseStoredPeriod(text: string | null): StoredPeriod | null {
  if (text === null) return null;
  try {
    const p = StoredPeriodSchema.safeParse(JSON.parse(text));
    return p.success ? p.data : null;
  } catch {
    return null;
  }
}

/** The schema of a SELECT through queryLogColumnsSql(alias, fields): those fields of QueryLogSchema. */
export function queryLogSchemaOf<const F extends readonly QueryLogField[]>(fields: F) {
  type Mask = { [K in F[number]]: true } & Record<Exclude<F[number], QueryLogField>, never>;
  return QueryLogSchema.pick(Object.fromEntries(fields.map((f) => [f, true])) as Mask);
}

/** The column of a field: `requestId` -> `request_id`. */
export function queryLogColumn(field: QueryLogField): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `alias.request_id AS "requestId", ...`: a SELECT list whose rows parse with QueryLogSchema.pick(fields). */
export function queryLogColumnsSql(alias: string, fields: readonly QueryLogField[]): string {
  return fields.map((f) => `${alias}.${queryLogColumn(f)} AS "${f}"`).join(', ');
}

/**
 * `json_object('requestId', alias.request_id, ...)`: the row's fields as one JSON object (a report's attached runs
 * are stored so), with `period` as its JSON value and `dryRun` as a boolean.
 */
export function queryLogJsonSql(alias: string, fields: readonly QueryLogField[]): string {
  const value = (f: QueryLogField) => {
    const col = `${alias}.${queryLogColumn(f)}`;
    if (f === 'period') return `json(${col})`;
    if (f === 'dryRun') return `CASE WHEN ${col} THEN json('true') ELSE json('false') END`;
    return col;
  };
  return `json_object(${fields.map((f) => `'${f}', ${value(f)}`).join(', ')})`;
}

/** The one statement that writes a query_log row; a redelivered row (same id) changes nothing. */
const QUERY_LOG_INSERT = `INSERT INTO query_log (${FIELDS.map(queryLogColumn).join(', ')})
  VALUES (${FIELDS.map(() => '?').join(', ')})
  ON CONFLICT (id) DO NOTHING`;

/** The INSERT of one row (fields a row queued before a migration lacks are written as NULL). */
export function insertQueryLog(db: D1Database, r: z.infer<typeof QueryLogSchema>): D1PreparedStatement {
  return db.prepare(QUERY_LOG_INSERT).bind(...FIELDS.map((f) => r[f] ?? null));
}

/** Writes one row now; a failure is logged with the whole row, so nothing is lost silently. */
async function writeNow(env: Env, row: QueryLogRow, log: Logger): Promise<void> {
  try {
    await insertQueryLog(env.DB, row).run();
  } catch (err) {
    log.error('query_log write failed', { internal: describeError(err), row });
  }
}

/** Delivers one run's row the configured way (see the module comment). Never throws. */
export async function deliverQueryLog(env: Env, row: QueryLogRow, log: Logger): Promise<void> {
  if (configOf(env).QUERY_LOG_DELIVERY !== 'queue') return writeNow(env, row, log);
  try {
    await env.QUERY_LOG.send(row, { contentType: 'json' });
  } catch (err) {
    log.warn('query_log row not enqueued; writing it directly', { internal: describeError(err), id: row.id });
    await writeNow(env, row, log);
  }
}

/** Attempts after which a batch that still cannot be written is logged row by row and acknowledged. */
export const QUERY_LOG_MAX_ATTEMPTS = 10;

/**
 * The consumer side: every valid row of the batch in one D1 batch (a transaction). On failure the messages are
 * retried (after a growing delay) until QUERY_LOG_MAX_ATTEMPTS, then each row is logged in full at error level.
 */
export async function consumeQueryLog(messages: readonly Message<unknown>[], env: Env, log: Logger): Promise<void> {
  const rows: { m: Message<unknown>; row: QueryLogRow }[] = [];
  for (const m of messages) {
    const parsed = QueryLogRowSchema.safeParse(m.body);
    if (parsed.success) rows.push({ m, row: parsed.data });
    else {
      log.error('query_log message dropped: not a row', { messageId: m.id, body: m.body });
      m.ack();
    }
  }
  if (rows.length === 0) return;
  try {
    await env.DB.batch(rows.map(({ row }) => insertQueryLog(env.DB, row)));
    for (const { m } of rows) m.ack();
  } catch (err) {
    const attempts = Math.max(...rows.map(({ m }) => m.attempts));
    if (attempts >= QUERY_LOG_MAX_ATTEMPTS) {
      for (const { m, row } of rows) {
        log.error('query_log row not written; giving up', { internal: describeError(err), row });
        m.ack();
      }
      return;
    }
    log.warn('query_log batch not written; retrying', { internal: describeError(err), rows: rows.length, attempts });
    for (const { m } of rows) m.retry({ delaySeconds: Math.min(300, 2 ** attempts) });
  }
}
