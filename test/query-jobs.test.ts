import { env, runDurableObjectAlarm, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateApiKey } from '../src/auth/api-keys';
import { advance } from '../src/features/query-jobs/long-run';
import { readJob } from '../src/features/query-jobs/job-store';
import { createLogger } from '../src/lib/log';
import { seedDemo, TEST_ADMINS, usedBytes } from './seed';
import { page, signedIn } from './admin-client';
import { inputValue } from './oauth-client';
import { warehouseFaults } from './warehouse-faults';

/**
 * Long queries over REST (docs/run-query.md, "Long queries"): `Prefer: respond-async`, the job resource, its result
 * pages, cancel, the running-jobs limit, and a job whose caller never comes back, ended by its alarm and billed.
 * Jobs are made slow with the local warehouse's `slowJob` fault, matched to a marker in each test's own SQL.
 */

const WH = env.BIGQUERY_API_BASE;
const ORDERS = '`service-v1.acme.fact__orders`';
const faults = warehouseFaults();

beforeAll(async () => {
  await seedDemo();
});

/** A slow job for SQL holding `marker` (its real submission only, not the dry run). */
const slowJob = (marker: string, ms: number) => faults.slowJob(marker, ms, { op: 'insert' });

/** A fresh brand key of its own (so its usage window holds only this test's runs), with optional long-run settings. */
async function freshKey(settings: { maxRunningJobs?: number; jobTimeoutMs?: number } = {}) {
  const key = await generateApiKey();
  await env.DB.prepare(
    `INSERT INTO api_keys (id, name, prefix, secret_hash, brand_id, max_running_jobs, job_timeout_ms, created_at)
     VALUES (?, ?, ?, ?, 'brand_acme', ?, ?, 0)`,
  )
    .bind(key.id, 'long jobs', key.prefix, key.secretHash, settings.maxRunningJobs ?? null, settings.jobTimeoutMs ?? null)
    .run();
  return key;
}

async function call(secret: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await SELF.fetch(`http://api.test${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, body: z.record(z.string(), z.unknown()).parse(await res.json()) };
}

const Job = z.object({
  jobId: z.string().regex(/^qj_/),
  status: z.enum(['running', 'cancelling', 'done', 'failed', 'cancelled', 'expired']),
  brandId: z.string(),
  createdAt: z.string(),
  endedAt: z.string().nullable(),
  elapsedMs: z.number().int().nonnegative(),
  bytesProcessed: z.number().nullable(),
  bytesBilled: z.number().nullable(),
  pollAfterMs: z.number().nullable(),
  result: z
    .object({ rows: z.array(z.record(z.string(), z.unknown())), totalRows: z.number(), nextCursor: z.string().nullable() })
    .passthrough()
    .optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

async function startAsync(secret: string, sql: string) {
  return call(secret, 'POST', '/v1/data/query', { sql }, { prefer: 'respond-async' });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls the job until it leaves `running`/`cancelling` (bounded: the slow jobs here take a few seconds). */
async function pollUntilEnded(secret: string, location: string) {
  for (let i = 0; i < 120; i++) {
    const res = await call(secret, 'GET', location);
    expect(res.status).toBe(200);
    const job = Job.parse(res.body);
    if (job.status !== 'running' && job.status !== 'cancelling') return job;
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    await sleep(500);
  }
  throw new Error(`job ${location} did not end`);
}

async function logRow(jobId: string) {
  return env.DB.prepare('SELECT outcome, bytes_billed, bq_job_id, async_job_id, error_message FROM query_log WHERE async_job_id = ?')
    .bind(jobId)
    .all();
}

describe('REST asynchronous jobs', () => {
  it('202 + Location; only the owner sees it; done with every row readable by cursor; billed once; logged', async () => {
    const key = await freshKey();
    const other = await freshKey();
    const marker = `async${crypto.randomUUID().slice(0, 8)}`;
    await slowJob(marker, 2_500);
    const sql = `SELECT order_id, order_date FROM ${ORDERS} WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 20 DAY) /* ${marker} */`;
    const started = await startAsync(key.secret, sql);
    expect(started.status).toBe(202);
    expect(started.headers.get('preference-applied')).toBe('respond-async');
    const location = started.headers.get('location') ?? '';
    const accepted = Job.parse(started.body);
    expect(location).toBe(`/v1/data/query/jobs/${accepted.jobId}`);
    expect(accepted).toMatchObject({ status: 'running', brandId: 'brand_acme', endedAt: null, bytesBilled: null });

    // Another key: the same 404 as a job that never existed, for reading and for cancelling.
    for (const method of ['GET', 'DELETE']) {
      const foreign = await call(other.secret, method, location);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ error: { code: 'JOB_NOT_FOUND' } });
    }
    expect((await call(key.secret, 'GET', '/v1/data/query/jobs/qj_00000000000000000000')).status).toBe(404);

    const done = await pollUntilEnded(key.secret, location);
    expect(done.status).toBe('done');
    expect(done.bytesBilled).toBeGreaterThan(0);
    // The done answer read its first page once, from row 0, learning the result's size from it (no separate read
    // for the size first).
    const bqJob = (await readJob(env, accepted.jobId))!.bq_job_id;
    const reads = z
      .object({ requests: z.array(z.object({ path: z.string(), query: z.record(z.string(), z.string()) })) })
      .parse(await (await fetch(`${WH}/__requests?op=getQueryResults&limit=500`)).json())
      .requests.filter((r) => r.path.includes(`/${bqJob}`));
    expect(reads.map((r) => r.query.startIndex)).toEqual(['0']);
    const result = done.result!;
    const rows = [...result.rows];
    let cursor = result.nextCursor;
    for (let pages = 0; cursor !== null; pages++) {
      expect(pages).toBeLessThan(100);
      const page = await call(key.secret, 'POST', '/v1/data/query/page', { cursor });
      expect(page.status).toBe(200);
      const body = z.object({ rows: z.array(z.record(z.string(), z.unknown())), nextCursor: z.string().nullable() }).parse(page.body);
      rows.push(...body.rows);
      cursor = body.nextCursor;
    }
    expect(rows).toHaveLength(result.totalRows);
    expect(new Set(rows.map((r) => r.order_id)).size).toBe(result.totalRows);
    // The same query run synchronously has the same rows.
    const sync = await call(key.secret, 'POST', '/v1/data/query', {
      sql: `SELECT order_id FROM ${ORDERS} WHERE order_date >= DATE_SUB(CURRENT_DATE(), INTERVAL 20 DAY)`,
    });
    expect(sync.body.totalRows).toBe(result.totalRows);

    // Settled to exactly what BigQuery billed (the reservation replaced), and one log row saying how it ended.
    const { results } = await logRow(done.jobId);
    expect(results).toEqual([expect.objectContaining({ outcome: 'OK', bytes_billed: done.bytesBilled, async_job_id: done.jobId })]);
    const syncBilled = z.object({ stats: z.object({ totalBytesBilled: z.number() }) }).parse(sync.body).stats.totalBytesBilled;
    expect(await usedBytes(key.id)).toBe(done.bytesBilled! + syncBilled);
  }, 60_000);

  it('DELETE cancels the BigQuery job and settles what it billed', async () => {
    const key = await freshKey();
    const marker = `cancel${crypto.randomUUID().slice(0, 8)}`;
    await slowJob(marker, 120_000);
    const started = await startAsync(key.secret, `SELECT order_id FROM ${ORDERS} /* ${marker} */`);
    expect(started.status).toBe(202);
    const location = started.headers.get('location') ?? '';
    const cancelled = await call(key.secret, 'DELETE', location);
    expect(cancelled.status).toBe(202);
    expect(['cancelling', 'cancelled']).toContain(Job.parse(cancelled.body).status);
    const ended = await pollUntilEnded(key.secret, location);
    expect(ended).toMatchObject({ status: 'cancelled', error: { code: 'QUERY_CANCELLED' } });
    expect(ended.bytesBilled).not.toBeNull();
    // The warehouse saw the cancel of this very job.
    const row = await readJob(env, ended.jobId);
    const cancels = await fetch(`${WH}/__requests?op=cancel&limit=500`).then((r) => r.json());
    expect(JSON.stringify(cancels)).toContain(row!.bq_job_id);
    expect(await usedBytes(key.id)).toBe(ended.bytesBilled);
    expect((await logRow(ended.jobId)).results).toEqual([expect.objectContaining({ outcome: 'QUERY_CANCELLED' })]);
    // Cancelling again answers the job as it is.
    expect(Job.parse((await call(key.secret, 'DELETE', location)).body).status).toBe('cancelled');
  }, 60_000);

  it('a key may have at most its limit of jobs running (429 runningJobs), counted before the run', async () => {
    const key = await freshKey({ maxRunningJobs: 1 });
    const marker = `limit${crypto.randomUUID().slice(0, 8)}`;
    await slowJob(marker, 120_000);
    const first = await startAsync(key.secret, `SELECT order_id FROM ${ORDERS} /* ${marker} */`);
    expect(first.status).toBe(202);
    const second = await startAsync(key.secret, `SELECT order_id FROM ${ORDERS} /* ${marker} b */`);
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ error: { code: 'USAGE_LIMIT_EXCEEDED', details: { limit: 'runningJobs', limitValue: 1 } } });
    expect(second.headers.get('retry-after')).toBe('5');
    await call(key.secret, 'DELETE', first.headers.get('location') ?? '');
    await pollUntilEnded(key.secret, first.headers.get('location') ?? '');
  }, 60_000);

  it('a synchronous call keeps its deadline: without Prefer the answer is the result, never 202', async () => {
    const key = await freshKey();
    const res = await call(key.secret, 'POST', '/v1/data/query', { sql: 'SELECT 1 AS one', brandId: 'brand_acme' });
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toBeNull();
    // A dry run with Prefer runs nothing, so it is answered at once as usual.
    const dry = await call(key.secret, 'POST', '/v1/data/query', { sql: 'SELECT 1 AS one', dryRun: true }, { prefer: 'respond-async' });
    expect(dry.status).toBe(200);
  });
});

describe('the console', () => {
  it('lists a running job to an administrator who sees its brand, with elapsed time, and cancels it', async () => {
    const key = await freshKey();
    const marker = `console${crypto.randomUUID().slice(0, 8)}`;
    await slowJob(marker, 120_000);
    const started = await startAsync(key.secret, `SELECT order_id FROM ${ORDERS} /* ${marker} */`);
    const { jobId } = Job.parse(started.body);
    const admin = await signedIn(TEST_ADMINS.org);
    const html = await page(admin, '/admin/jobs');
    // The page is in the console's navigation, marked as the current one.
    expect(html).toMatch(/<a href="\/admin\/jobs" aria-current="page"><span class="nav-long">Long queries<\/span>/);
    expect(await page(admin, '/admin/history')).toContain('<a href="/admin/jobs"><span class="nav-long">Long queries</span>');
    const row = html.slice(html.indexOf(`id="job-${jobId}"`));
    expect(row).toContain(marker);
    expect(row).toContain('running');
    expect(row).toContain(`/admin/jobs/${jobId}/cancel`);
    const res = await admin.post(`/admin/jobs/${jobId}/cancel`, { csrf: inputValue(html, 'csrf') });
    expect(res.status).toBe(303);
    const ended = await pollUntilEnded(key.secret, started.headers.get('location') ?? '');
    expect(ended).toMatchObject({ status: 'cancelled', error: { code: 'QUERY_CANCELLED' } });
    expect(await usedBytes(key.id)).toBe(ended.bytesBilled);
  }, 60_000);
});

describe('a job whose caller never comes back', () => {
  /** Runs the job's alarm until the job ends (each run asks BigQuery once). */
  async function alarmsUntilEnded(jobId: string) {
    const stub = env.QUERY_JOB_ALARM.getByName(jobId);
    for (let i = 0; i < 60; i++) {
      const row = await readJob(env, jobId);
      if (row && row.status !== 'running' && row.status !== 'cancelling') return row;
      await runDurableObjectAlarm(stub);
      await sleep(250);
    }
    throw new Error(`job ${jobId} did not end`);
  }

  it('is stopped by BigQuery at its longest duration (jobTimeoutMs), ended by its alarm and billed', async () => {
    const key = await freshKey({ jobTimeoutMs: 1_000 });
    const marker = `abandon${crypto.randomUUID().slice(0, 8)}`;
    await slowJob(marker, 120_000);
    const started = await startAsync(key.secret, `SELECT order_id FROM ${ORDERS} /* ${marker} */`);
    expect(started.status).toBe(202);
    const { jobId } = Job.parse(started.body);
    // BigQuery was told the key's longest duration.
    const inserts = await fetch(`${WH}/__requests?op=insert&sql=${marker}&limit=50`).then((r) => r.json());
    expect(JSON.stringify(inserts)).toContain('"jobTimeoutMs":"1000"');
    const ended = await alarmsUntilEnded(jobId);
    expect(ended).toMatchObject({ status: 'expired', error_code: 'WAREHOUSE_TIMEOUT' });
    expect(ended.settled_at).not.toBeNull();
    expect(await usedBytes(key.id)).toBe(ended.bytes_billed);
    expect((await logRow(jobId)).results).toEqual([expect.objectContaining({ outcome: 'WAREHOUSE_TIMEOUT' })]);
  }, 60_000);

  it('past our own deadline (BigQuery still running it) is cancelled, then settled as expired', async () => {
    const key = await freshKey();
    const marker = `deadline${crypto.randomUUID().slice(0, 8)}`;
    await slowJob(marker, 120_000);
    const started = await startAsync(key.secret, `SELECT order_id FROM ${ORDERS} /* ${marker} */`);
    const { jobId } = Job.parse(started.body);
    const row = await readJob(env, jobId);
    // The clock past the deadline: the step marks the job cancelling and sends jobs.cancel (then waits, bounded, for
    // BigQuery to stop it).
    const stepped = await advance(env, row!, row!.deadline_at + 1, createLogger('req_test'));
    expect(stepped).toMatchObject({ cancel_reason: 'deadline' });
    expect(['cancelling', 'expired']).toContain(stepped.status);
    const ended = await alarmsUntilEnded(jobId);
    expect(ended).toMatchObject({ status: 'expired', error_code: 'WAREHOUSE_TIMEOUT' });
    expect(await usedBytes(key.id)).toBe(ended.bytes_billed);
    // The owner's poll sees the same end.
    const polled = Job.parse((await call(key.secret, 'GET', `/v1/data/query/jobs/${jobId}`)).body);
    expect(polled).toMatchObject({ status: 'expired', error: { code: 'WAREHOUSE_TIMEOUT' } });
  }, 60_000);
});
