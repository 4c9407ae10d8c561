// query_log retention (QUERY_LOG_RETENTION_DAYS, the hourly cron): rows past the window move to the real R2 bucket
// as NDJSON, one object per UTC day, written before they are deleted from the real D1; the Worker's own `scheduled`
// handler runs the pass.
import { createScheduledController, env } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { insertQueryLog, type QueryLogRow } from '../src/features/query/query-log';
import { listRunsStatement } from '../src/features/query-history/history';
import { archiveQueryLog } from '../src/features/query-history/retention';
import { createLogger } from '../src/lib/log';

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.UTC(2026, 10, 27, 3, 17); // the cron's scheduled time
const WINDOW = Number(env.QUERY_LOG_RETENTION_DAYS);

/** One row with every column filled (no NULLs), so the archive is seen to keep each one. */
function row(id: string, createdAt: number): QueryLogRow {
  return {
    kind: 'query-log',
    id,
    requestId: `req_${id}`,
    principalKind: 'key',
    principalId: 'key_1',
    orgId: 'org_1',
    userId: 'user_1',
    brandId: 'acme',
    queryId: 'q_orders',
    period: '{"startDate":"2026-01-01","endDate":"2026-01-31"}',
    sql: `SELECT ${id.length} AS n`,
    dryRun: 1,
    transport: 'mcp',
    outcome: 'OK',
    bytesProcessed: 1024,
    bytesBilled: 10485760,
    rowCount: 3,
    durationMs: 42,
    createdAt,
    errorMessage: 'none',
    clientName: 'Claude',
    bqJobId: 'job_1',
    bqLocation: 'US',
    bqQueryId: 'qid_1',
    asyncJobId: 'ajob_1',
  };
}

// Three days past the window (two rows on the oldest), one row just inside it and one from today.
const OLD = [
  { id: 'ql_a1', at: NOW - (WINDOW + 5) * DAY },
  { id: 'ql_a2', at: NOW - (WINDOW + 5) * DAY + 60_000 },
  { id: 'ql_b1', at: NOW - (WINDOW + 2) * DAY },
  { id: 'ql_c1', at: NOW - WINDOW * DAY - 1 },
];
const RECENT = [
  { id: 'ql_d1', at: NOW - WINDOW * DAY + 60_000 },
  { id: 'ql_e1', at: NOW - 1000 },
];
const day = (at: number) => new Date(at).toISOString().slice(0, 10);

async function ids(): Promise<string[]> {
  const { results } = await env.DB.prepare('SELECT id FROM query_log ORDER BY id').all<{ id: string }>();
  return results.map((r) => r.id);
}

async function archived(): Promise<Map<string, string>> {
  const listed = await env.QUERY_LOG_ARCHIVE.list({ prefix: 'query-log/' });
  const out = new Map<string, string>();
  for (const o of listed.objects) out.set(o.key, (await (await env.QUERY_LOG_ARCHIVE.get(o.key))!.text()) as string);
  return out;
}

/** `base` with an archive bucket that refuses every write. */
function withR2Down<T extends typeof env>(base: T): T {
  return {
    ...base,
    QUERY_LOG_ARCHIVE: Object.assign(Object.create(env.QUERY_LOG_ARCHIVE) as R2Bucket, {
      put: () => Promise.reject(new Error('R2 unavailable')),
    }),
  };
}

/** `env` whose D1 prepares statements through `prepare` (which gets the real D1's own). */
function withPrepare(prepare: (sql: string, real: D1Database) => D1PreparedStatement): typeof env {
  return { ...env, DB: Object.assign(Object.create(env.DB) as D1Database, { prepare: (sql: string) => prepare(sql, env.DB) }) };
}

async function runCron(e: typeof env = env): Promise<void> {
  await worker.scheduled(createScheduledController({ scheduledTime: NOW, cron: '17 * * * *' }), e);
}

beforeEach(async () => {
  await env.DB.prepare('DELETE FROM query_log').run();
  const listed = await env.QUERY_LOG_ARCHIVE.list();
  if (listed.objects.length) await env.QUERY_LOG_ARCHIVE.delete(listed.objects.map((o) => o.key));
  await env.DB.batch([...OLD, ...RECENT].map((r) => insertQueryLog(env.DB, row(r.id, r.at))));
});

describe("the cron refreshes the query planner's statistics", () => {
  const ORG_ADMIN = { orgIds: ['org_1'], brandIds: ['acme', 'globex'] };

  /** `n` recent runs of one organization over two brands and three callers, as a busy log holds them. */
  async function manyRuns(n: number): Promise<void> {
    await env.DB.prepare(
      `INSERT INTO query_log (id, request_id, principal_kind, principal_id, brand_id, org_id, sql, transport, outcome, created_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       SELECT printf('ql_many_%06d', i), printf('req_many_%06d', i), 'key', printf('key_%d', i % 3),
         CASE WHEN i % 2 = 0 THEN 'globex' ELSE 'acme' END, 'org_1', 'SELECT 1', 'rest', 'OK', ? - i * 1000
       FROM n`,
    )
      .bind(n, NOW)
      .run();
  }

  /** How D1 runs the history's first page for an organization administrator. */
  async function firstPagePlan(): Promise<string> {
    const s = listRunsStatement(ORG_ADMIN, {}, 51);
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
      .bind(...s.params)
      .all<{ detail: string }>();
    return results.map((r) => r.detail).join(' | ');
  }

  // First in the file: no cron has run in this file's fresh database yet, so there are no statistics (SQLite reads
  // them when it loads the schema; deleting rows of sqlite_stat1 would not unload them).
  it('after the pass: the newest-first page walks query_log_created instead of sorting every visible run', async () => {
    await manyRuns(5000);
    expect(await firstPagePlan()).not.toContain('USING INDEX query_log_created');
    await runCron();
    expect(await firstPagePlan()).toContain('USING INDEX query_log_created');
    const { results } = await env.DB.prepare("SELECT idx FROM sqlite_stat1 WHERE tbl = 'query_log'").all<{ idx: string }>();
    expect(results.map((r) => r.idx)).toContain('query_log_created');
  });

  it('refreshes them when the pass failed, and a failed refresh fails nothing', async () => {
    // What the cron prepares on D1, in order (the statistics from the test above stay, so the plan cannot tell).
    const prepared: string[] = [];
    const recording = withPrepare((sql, real) => (prepared.push(sql), real.prepare(sql)));
    await expect(runCron(withR2Down(recording))).rejects.toThrow('R2 unavailable');
    expect(prepared.at(-1)).toBe('PRAGMA optimize');

    const pragmaRefused = withPrepare((sql, real) => real.prepare(sql.startsWith('PRAGMA') ? 'SELECT no_such_column FROM query_log' : sql));
    // The pass before it failed above (R2 down) and deleted nothing; this one archives the three old days.
    await runCron(pragmaRefused);
    expect((await archived()).size).toBe(3);
    expect(await ids()).not.toContain(OLD[0]!.id);
  });
});

describe('query_log retention', () => {
  it('moves rows past the window to R2 as NDJSON, one object per UTC day, and deletes them', async () => {
    const { results: before } = await env.DB.prepare('SELECT * FROM query_log ORDER BY created_at, id').all<Record<string, unknown>>();
    await runCron();

    expect(await ids()).toEqual(RECENT.map((r) => r.id));
    const objects = await archived();
    const expected = new Map<string, string[]>();
    for (const r of OLD) {
      const key = `query-log/${day(r.at)}/${(expected.get(day(r.at)) ?? [r.id])[0]}.ndjson`;
      expected.set(day(r.at), [...(expected.get(day(r.at)) ?? []), r.id]);
      expect(objects.has(key)).toBe(true);
    }
    expect(objects.size).toBe(expected.size);
    const lines = [...objects.values()].flatMap((text) => {
      expect(text.endsWith('\n')).toBe(true);
      return text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    });
    // Every column of every archived row, as D1 held it.
    const oldRows = before.filter((r) => OLD.some((o) => o.id === r.id));
    expect(lines.sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual(
      oldRows.sort((a, b) => String(a.id).localeCompare(String(b.id))),
    );
    expect(Object.keys(lines[0]!)).toHaveLength(24);
    expect(Object.values(lines[0]!).every((v) => v !== null)).toBe(true);

    // A second pass finds nothing past the window and changes nothing.
    const again = await archiveQueryLog(env, NOW, createLogger('test'));
    expect(again).toMatchObject({ archived: 0, objects: [], more: false });
    expect(await ids()).toEqual(RECENT.map((r) => r.id));
    expect(await archived()).toEqual(objects);
  });

  it('deletes nothing when R2 refuses the write', async () => {
    await expect(runCron(withR2Down(env))).rejects.toThrow('R2 unavailable');
    expect(await ids()).toEqual([...OLD, ...RECENT].map((r) => r.id).sort());
    expect((await archived()).size).toBe(0);
  });

  it('moves a bounded number of rows per run, and a rerun after a crash rewrites the same key', async () => {
    const first = await archiveQueryLog(env, NOW, createLogger('test'), { batchRows: 2, maxBatches: 1 });
    expect(first).toMatchObject({ archived: 2, more: true, objects: [`query-log/${day(OLD[0]!.at)}/ql_a1.ndjson`] });
    const written = await archived();

    // A crash after the put and before the delete: the rows are back in D1; the rerun writes the same object.
    await env.DB.batch(OLD.slice(0, 2).map((r) => insertQueryLog(env.DB, row(r.id, r.at))));
    const rerun = await archiveQueryLog(env, NOW, createLogger('test'), { batchRows: 2, maxBatches: 1 });
    expect(rerun.objects).toEqual(first.objects);
    expect(await archived()).toEqual(written);

    const rest = await archiveQueryLog(env, NOW, createLogger('test'), { batchRows: 2, maxBatches: 5 });
    expect(rest).toMatchObject({ archived: 2, more: false });
    expect(await ids()).toEqual(RECENT.map((r) => r.id));
    expect((await archived()).size).toBe(3);
  });
});
