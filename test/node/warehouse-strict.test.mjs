// The local warehouse behaves as Google documents BigQuery where a kinder answer would hide a client bug:
// cancel returns at once and the job bills later, no requestId de-duplication for SELECT, a query cache whose
// hits bill nothing and whose dry runs list no tables, JOB_CREATION_OPTIONAL, jobTimeoutMs, int64 timestamps,
// job ids that stay taken, and comments ended exactly where the Worker's SQL guard ends them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, rowsOf, startTestWarehouse } from './warehouse-helpers.mjs';

let t;

beforeAll(async () => {
  t = await startTestWarehouse({ cancelDelayMs: 300 });
});

afterAll(async () => {
  await t?.wh.close();
});

const ORDERS = '`service-v1.umbrella.fact__orders`';
const marker = () => crypto.randomUUID().replaceAll('-', '');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function untilDone(jobId) {
  for (let i = 0; i < 100; i++) {
    const job = await t.call('GET', `${API}/jobs/${jobId}?location=US`);
    if (job.body.status.state === 'DONE') return job.body;
    await sleep(25);
  }
  throw new Error(`job ${jobId} never finished`);
}

describe('jobs.cancel (BigQuery: "This call will return immediately ... Cancelled jobs may still incur costs")', () => {
  it('answers at once with the job still RUNNING and no statistics; the job ends DONE later and bills what it read', async () => {
    const m = marker();
    t.wh.faults.arm({ kind: 'slowJob', ms: 5_000, match: { sql: m } });
    const r = await t.query(`SELECT SUM(quantity) AS q FROM ${ORDERS} /* ${m} */`, { timeoutMs: 10 });
    const jobId = r.body.jobReference.jobId;
    // At once: the answer says RUNNING while the job has seconds of its 5 left (a cancel that waited would say DONE).
    const c = await t.call('POST', `${API}/jobs/${jobId}/cancel?location=US`);
    expect(c.body.job.status).toEqual({ state: 'RUNNING' });
    expect(c.body.job.statistics.query).toBeUndefined();
    const done = await untilDone(jobId);
    expect(done.status.errorResult.reason).toBe('stopped');
    expect(Number(done.statistics.query.totalBytesBilled)).toBeGreaterThan(0);
  });
});

describe('requestId', () => {
  it('is not used to answer an earlier SELECT: the same requestId runs (and bills) a second job', async () => {
    const requestId = crypto.randomUUID();
    const sql = `SELECT COUNT(order_id) AS n FROM ${ORDERS}`;
    const a = await t.query(sql, { requestId, useQueryCache: false });
    const b = await t.query(sql, { requestId, useQueryCache: false });
    expect(a.body.jobReference.jobId).not.toBe(b.body.jobReference.jobId);
    expect(Number(b.body.totalBytesBilled)).toBeGreaterThan(0);
  });
});

describe('query cache', () => {
  it('a repeated query is a cache hit: 0 bytes processed and billed, cacheHit true, same rows', async () => {
    const sql = `SELECT COUNT(order_id) AS n FROM ${ORDERS} /* ${marker()} */`;
    const a = await t.query(sql);
    expect(a.body.cacheHit).toBe(false);
    expect(Number(a.body.totalBytesBilled)).toBeGreaterThan(0);
    const b = await t.query(sql);
    expect(b.body).toMatchObject({ cacheHit: true, totalBytesBilled: '0', totalBytesProcessed: '0' });
    expect(rowsOf(b.body)).toEqual(rowsOf(a.body));
    const job = await t.call('GET', `${API}/jobs/${b.body.jobReference.jobId}`);
    expect(job.body.statistics.query).toMatchObject({ cacheHit: true, totalBytesBilled: '0' });
  });

  it('useQueryCache: false runs and bills again', async () => {
    const sql = `SELECT COUNT(order_id) AS n FROM ${ORDERS} /* ${marker()} */`;
    await t.query(sql);
    const b = await t.query(sql, { useQueryCache: false });
    expect(b.body.cacheHit).toBe(false);
    expect(Number(b.body.totalBytesBilled)).toBeGreaterThan(0);
  });

  it('a dry run that the cache would answer reports cacheHit and no referencedTables; with useQueryCache: false it lists them', async () => {
    const sql = `SELECT COUNT(order_id) AS n FROM ${ORDERS} /* ${marker()} */`;
    await t.query(sql);
    const cached = await t.dryRun(sql);
    expect(cached.body.statistics.query.cacheHit).toBe(true);
    expect(cached.body.statistics.query.referencedTables).toBeUndefined();
    expect(cached.body.statistics.totalBytesProcessed).toBe('0');
    const strict = await t.call('POST', `${API}/jobs`, {
      configuration: { dryRun: true, query: { query: sql, useLegacySql: false, useQueryCache: false } },
    });
    expect(strict.body.statistics.query.cacheHit).toBe(false);
    expect(strict.body.statistics.query.referencedTables).toEqual([
      { projectId: 'service-v1', datasetId: 'umbrella', tableId: 'fact__orders' },
    ]);
  });

  it('queries with non-deterministic functions are not cached', async () => {
    const sql = `SELECT COUNT(order_id) AS n, CURRENT_DATE() AS d FROM ${ORDERS} /* ${marker()} */`;
    await t.query(sql);
    const b = await t.query(sql);
    expect(b.body.cacheHit).toBe(false);
  });

  // Google caches only what it documents (docs/local-warehouse.md, "Query cache"); each of these runs, and bills, again.
  it('INFORMATION_SCHEMA is never cached and bills its 10 MiB minimum on every run', async () => {
    const sql = `SELECT COUNT(*) AS n FROM \`service-v1.umbrella.INFORMATION_SCHEMA.COLUMNS\` /* ${marker()} */`;
    const a = await t.query(sql);
    const b = await t.query(sql);
    for (const r of [a, b]) expect(r.body).toMatchObject({ cacheHit: false, totalBytesBilled: String(10 * 1024 * 1024) });
  });

  it('wildcard tables are never cached', async () => {
    const sql = `SELECT COUNT(*) AS n FROM \`service-v1.umbrella.events_*\` /* ${marker()} */`;
    await t.query(sql);
    const b = await t.query(sql);
    expect(b.body.cacheHit).toBe(false);
    expect(Number(b.body.totalBytesBilled)).toBeGreaterThanOrEqual(0);
  });

  it('a job-less run (JOB_CREATION_OPTIONAL) fills no cache: a repeat runs and bills again', async () => {
    const sql = `SELECT COUNT(order_id) AS n FROM ${ORDERS} /* ${marker()} */`;
    const a = await t.query(sql, { jobCreationMode: 'JOB_CREATION_OPTIONAL' });
    expect(a.body.jobReference).toBeUndefined();
    const b = await t.query(sql, { jobCreationMode: 'JOB_CREATION_OPTIONAL' });
    expect(b.body).toMatchObject({ cacheHit: false, totalBytesBilled: a.body.totalBytesBilled });
    expect(Number(b.body.totalBytesBilled)).toBeGreaterThan(0);
  });
});

describe('jobCreationMode: JOB_CREATION_OPTIONAL (short query optimized mode)', () => {
  it('a short query whose whole result is in the answer runs without a job: no jobReference, a queryId', async () => {
    const r = await t.query('SELECT 1 AS x', { jobCreationMode: 'JOB_CREATION_OPTIONAL', requestId: crypto.randomUUID() });
    expect(r.status).toBe(200);
    expect(r.body.jobReference).toBeUndefined();
    expect(r.body.queryId).toMatch(/\S/);
    expect(r.body).toMatchObject({ jobComplete: true, totalRows: '1' });
  });

  it('a result that needs more pages gets a job (LARGE_RESULTS); so does one that outlives the wait (LONG_RUNNING)', async () => {
    const large = await t.query(`SELECT order_id FROM ${ORDERS} LIMIT 10`, { jobCreationMode: 'JOB_CREATION_OPTIONAL', maxResults: 3 });
    expect(large.body.jobReference.jobId).toMatch(/\S/);
    expect(large.body.jobCreationReason).toEqual({ code: 'LARGE_RESULTS' });
    const m = marker();
    t.wh.faults.arm({ kind: 'slowJob', ms: 300, match: { sql: m } });
    const slow = await t.query(`SELECT 1 AS x /* ${m} */`, { jobCreationMode: 'JOB_CREATION_OPTIONAL', timeoutMs: 10 });
    expect(slow.body).toMatchObject({ jobComplete: false, jobCreationReason: { code: 'LONG_RUNNING' } });
    expect(slow.body.jobReference.jobId).toMatch(/\S/);
  });

  it('refuses an unknown mode', async () => {
    const r = await t.query('SELECT 1', { jobCreationMode: 'SOMETIMES' });
    expect(r.status).toBe(400);
  });
});

describe('jobTimeoutMs', () => {
  it('stops a job that runs longer, with errorResult timeout', async () => {
    const m = marker();
    t.wh.faults.arm({ kind: 'slowJob', ms: 5_000, match: { sql: m } });
    const r = await t.query(`SELECT 1 AS x /* ${m} */`, { timeoutMs: 10, jobTimeoutMs: '200' });
    const done = await untilDone(r.body.jobReference.jobId);
    expect(done.status.errorResult.reason).toBe('timeout');
    expect(done.configuration.jobTimeoutMs).toBe('200');
  });
});

describe('TIMESTAMP wire forms', () => {
  const sql = "SELECT TIMESTAMP '9999-12-31 23:59:59.999999 UTC' AS ts";
  it('integer microseconds when formatOptions.useInt64Timestamp is asked for (jobs.query and getQueryResults)', async () => {
    const r = await t.query(sql, { formatOptions: { useInt64Timestamp: true } });
    expect(rowsOf(r.body)).toEqual([{ ts: '253402300799999999' }]);
    const page = await t.call('GET', `${API}/queries/${r.body.jobReference.jobId}?formatOptions.useInt64Timestamp=true`);
    expect(rowsOf(page.body)).toEqual([{ ts: '253402300799999999' }]);
  });

  it("float seconds otherwise (BigQuery's default), which cannot carry every microsecond", async () => {
    const r = await t.query(sql);
    expect(rowsOf(r.body)[0].ts).not.toContain('999999');
  });
});

describe('job ids', () => {
  it('a job id stays taken after its job is no longer held: a reused id is 409 duplicate', async () => {
    const jobId = `job_${marker()}`;
    const body = {
      jobReference: { projectId: 'service-v1', jobId, location: 'US' },
      configuration: { query: { query: 'SELECT 2 AS x', useLegacySql: false } },
    };
    expect((await t.call('POST', `${API}/jobs`, body)).status).toBe(200);
    const again = await t.call('POST', `${API}/jobs`, body);
    expect(again.status).toBe(409);
    expect(again.body.error.errors[0].reason).toBe('duplicate');
  });
});

describe("comments end where the Worker's SQL guard ends them (CR or LF)", () => {
  it.each([
    ['-- then CR', 'SELECT 1 AS x -- c\r, 2 AS y'],
    ['# then CR', 'SELECT 1 AS x # c\r, 2 AS y'],
    ['-- then CR LF', 'SELECT 1 AS x -- c\r\n, 2 AS y'],
    ['-- then LF', 'SELECT 1 AS x -- c\n, 2 AS y'],
  ])('%s: the text after the line break is SQL', async (_, sql) => {
    const r = await t.query(sql);
    expect(r.status).toBe(200);
    expect(rowsOf(r.body)).toEqual([{ x: '1', y: '2' }]);
  });

  it.each([
    ['a second statement after CR', 'SELECT 1 AS x --\r; SELECT table_name FROM information_schema.tables'],
    ['a DuckDB-only statement after CR', 'SELECT 1 AS x #\r; PRAGMA show_tables'],
    ['another dataset after CR', 'SELECT 1 AS x --\rFROM `service-v1.globex.fact__orders`'],
  ])("%s is read as SQL, not hidden in a comment: never DuckDB's catalog", async (_, sql) => {
    const r = await t.query(sql);
    // Either refused, or (another dataset, which this account may read) run with that table listed by the dry run.
    if (r.status === 200) {
      const dry = await t.call('POST', `${API}/jobs`, {
        configuration: { dryRun: true, query: { query: sql, useLegacySql: false, useQueryCache: false } },
      });
      expect(dry.body.statistics.query.referencedTables).toEqual([
        { projectId: 'service-v1', datasetId: 'globex', tableId: 'fact__orders' },
      ]);
    } else {
      expect([400, 403]).toContain(r.status);
      expect(r.text).not.toMatch(/fact__orders|dim_/);
    }
  });

  it('a comment flood (25,000 /**/ in 100 KiB) is answered in seconds, not minutes', async () => {
    const sql = `SELECT 1 AS x ${'/**/'.repeat(25_000)}`;
    expect(sql.length).toBeLessThanOrEqual(102_400);
    const started = performance.now();
    const r = await t.call('POST', `${API}/jobs`, { configuration: { dryRun: true, query: { query: sql, useLegacySql: false } } });
    const ms = performance.now() - started;
    expect(r.status).toBe(200);
    expect(ms).toBeLessThan(5_000);
  });
});

describe('dry run fails closed', () => {
  it('on a FROM item of a kind it does not read', async () => {
    const r = await t.dryRun('SHOW TABLES');
    expect(r.status).toBe(400);
  });
});
