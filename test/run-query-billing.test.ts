import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Principal } from '../src/auth/principal';
import type { OpContext } from '../src/context';
import { configOf } from '../src/env';
import { ApiError } from '../src/errors';
import { createLogger } from '../src/lib/log';
import { HandedOff, runQuery } from '../src/features/query/run-query';
import { runReservation } from '../src/usage/reservation';
import { acquireRun } from '../src/usage/usage';
import { createWarehouseClient, type JobRef } from '../src/warehouse/bigquery-client';
import { postJson, seedDemo } from './seed';
import { warehouseFaults } from './warehouse-faults';

// Billing and metering of run_query against the local warehouse (review 2: N1, N2, N6, N11): every billed byte is
// settled once on the key's meter, a cut result is one execution, and the query log carries BigQuery's ids. The
// operation is called directly with its own principal, so the key's byte budget shows exactly what was settled.

const WH = env.BIGQUERY_API_BASE;
const ORDERS = '`service-v1.acme.fact__orders`';
const DAILY_BYTES = 100 * 1024 ** 3;

const Entry = z.object({
  op: z.string(),
  body: z.unknown(),
  status: z.number().nullable(),
  answer: z.object({ jobId: z.string().nullable().optional(), totalBytesBilled: z.string().nullable().optional() }).nullable(),
});
const DryRun = z.object({ configuration: z.object({ dryRun: z.literal(true) }) });

/** The executions (jobs.query, and jobs.insert other than the dry run) of the SQL holding `marker`. */
async function executions(marker: string) {
  const res = await fetch(`${WH}/__requests?${new URLSearchParams({ sql: marker, limit: '500' })}`);
  return z
    .object({ requests: z.array(Entry) })
    .parse(await res.json())
    .requests.filter((r) => r.op === 'query' || (r.op === 'insert' && !DryRun.safeParse(r.body).success));
}

const { arm } = warehouseFaults();

const marker = () => `b${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;

/** A fresh key of one brand (its own usage window), the operation's context, and what it left in the background. */
function setup(timeoutMs = 30_000, brand: { id: string; orgId: string } = { id: 'brand_acme', orgId: 'org_demo' }) {
  const principal: Principal = {
    kind: 'key',
    id: `key_bill_${marker()}`,
    label: 'billing',
    orgId: brand.orgId,
    scope: 'brand',
    brandIds: [brand.id],
    limits: {
      maxBytesBilled: 10 * 1024 ** 3,
      dailyQueries: 1000,
      dailyBytes: DAILY_BYTES,
      checksPerMinute: Number(env.DEFAULT_CHECKS_PER_MINUTE),
      pageReadsPerMinute: Number(env.DEFAULT_PAGE_READS_PER_MINUTE),
      maxRunningJobs: 2,
      jobTimeoutMs: 1_800_000,
    },
  };
  const background: Promise<unknown>[] = [];
  const ctx: OpContext = {
    env,
    config: { ...configOf(env), QUERY_TIMEOUT_MS: timeoutMs },
    principal,
    requestId: `req_${marker()}`,
    origin: 'http://127.0.0.1',
    log: createLogger('req_bill'),
    now: Date.now(),
    transport: 'mcp',
    waitUntil: (p) => void background.push(p),
  };
  /** Bytes the key's meter holds once every background settlement has finished. */
  const settled = async () => {
    while (background.length) await Promise.all(background.splice(0));
    const ticket = await acquireRun(env, principal, Date.now(), { consume: false });
    return DAILY_BYTES - ticket.budget.bytesRemaining;
  };
  return { ctx, settled };
}

/** An MCP-like transport that keeps only the first few rows of any answer. */
const cutAtFive = { fitRows: (rows: unknown[]) => Math.min(rows.length, 5) };

beforeAll(async () => {
  await seedDemo();
});

describe('one answer, one execution, every billed byte settled once', () => {
  it('a result the transport cuts is one execution, and the key is charged exactly what it billed (N1, N2)', async () => {
    const m = marker();
    // CURRENT_DATE: never cached on BigQuery, so a second execution would bill (and be charged) again. A second
    // execution here (the old rerun) is made to hang, as a slow one would: it must not exist at all.
    await arm({ kind: 'slowJob', ms: 60_000, persistent: true, match: { op: 'insert', sql: m, dryRun: false } });
    const { ctx, settled } = setup(3_000);
    const sql = `SELECT order_id FROM ${ORDERS} WHERE order_date < CURRENT_DATE() ORDER BY order_id LIMIT 40 /* ${m} */`;
    const out = await runQuery(ctx, { sql, brandId: 'brand_acme' }, { rowCap: 200, ...cutAtFive });
    expect(out.result).toMatchObject({ rowCount: 5, totalRows: 40, truncated: true });
    expect(out.result.nextCursor).not.toBeNull();
    const runs = await executions(m);
    expect(runs.map((r) => r.op)).toEqual(['query']);
    const billed = Number(runs[0]?.answer?.totalBytesBilled);
    expect(billed).toBeGreaterThan(0);
    expect(out.result.stats).toMatchObject({ totalBytesBilled: billed });
    expect(await settled()).toBe(billed);
  }, 30_000);

  it('a 5xx on the first submission is answered through one client-id job, charged what that job billed, not the reservation (N6)', async () => {
    const m = marker();
    await arm({ kind: 'http503', count: 1, match: { op: 'query', sql: m } });
    const { ctx, settled } = setup();
    const sql = `SELECT order_id, revenue FROM ${ORDERS} ORDER BY order_id LIMIT 3 /* ${m} */`;
    const out = await runQuery(ctx, { sql, brandId: 'brand_acme' });
    expect(out.result.rowCount).toBe(3);
    const runs = await executions(m);
    expect(runs.map((r) => [r.op, r.status])).toEqual([
      ['query', 503],
      ['insert', 200],
    ]);
    expect(await settled()).toBe(out.result.stats?.totalBytesBilled);
    expect(out.result.stats?.totalBytesBilled).toBeGreaterThan(0);
  });

  it('when the fallback job fails too, the attempt that may have run and the fallback are both counted, summed (N2)', async () => {
    const m = marker();
    await arm({ kind: 'http503', count: 1, match: { op: 'query', sql: m } });
    await arm({ kind: 'http503', persistent: true, match: { op: 'insert', sql: m, dryRun: false } });
    const { ctx, settled } = setup(4_000);
    const sql = `SELECT order_id FROM ${ORDERS} ORDER BY order_id LIMIT 3 /* ${m} */`;
    const err = await runQuery(ctx, { sql, brandId: 'brand_acme' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'WAREHOUSE_UNAVAILABLE' });
    // The fast path may have run: its estimate (the run's reservation) counts; the fallback job was never created
    // (every insert answered 503), so after the not-found grace it adds 0. Both reach the meter, summed.
    const dry = await runQuery(setup().ctx, { sql, brandId: 'brand_acme', dryRun: true });
    const reservation = runReservation(dry.result.stats?.totalBytesProcessed ?? NaN, 1, 10 * 1024 ** 3);
    expect(reservation).toBeGreaterThan(0);
    expect(await settled()).toBe(reservation);
  }, 30_000);
});

describe('a wildcard reserves what its shards can bill (N1b)', () => {
  it('past the 50 tables BigQuery lists, the reservation counts every matched shard at the 10 MB minimum', async () => {
    const umbrella = { id: 'brand_umbrella', orgId: 'org_other' };
    // 60 shards; BigQuery's dry run lists at most 50 of them ("Queries that reference more than 50 tables will not
    // have a complete list"), while every shard the query reads bills at least 10 MB.
    const sql = `SELECT event_name FROM \`service-v1.umbrella.events_*\` LIMIT 1 /* ${marker()} */`;
    let reserved = NaN;
    const handedOff = await runQuery(
      setup(30_000, umbrella).ctx,
      { sql, brandId: 'brand_umbrella' },
      {
        handOff: async (run) => {
          reserved = run.ticket.reservedBytes;
          return 'held';
        },
      },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    expect(handedOff).toBeInstanceOf(HandedOff);
    const out = await runQuery(setup(30_000, umbrella).ctx, { sql, brandId: 'brand_umbrella' });
    const billed = out.result.stats?.totalBytesBilled ?? NaN;
    expect(billed).toBeGreaterThanOrEqual(60 * 10 * 1024 ** 2);
    expect(reserved).toBeGreaterThanOrEqual(billed);
    expect(reserved).toBeGreaterThanOrEqual(out.result.stats?.totalBytesProcessed ?? NaN);
  });
});

describe('the query log can be reconciled with the bill (N11)', () => {
  it("records BigQuery's job id and location, or the job-less query id, with every run", async () => {
    const m = marker();
    const small = `SELECT 1 AS one /* ${m} */`;
    expect((await postJson('/v1/data/query', 'brand', { sql: small })).status).toBe(200);
    const jobless = await env.DB.prepare('SELECT bq_job_id, bq_location, bq_query_id FROM query_log WHERE sql = ?')
      .bind(small)
      .first<{ bq_job_id: string | null; bq_location: string | null; bq_query_id: string | null }>();
    expect(jobless).toMatchObject({ bq_job_id: null, bq_query_id: expect.stringMatching(/\S/) });

    const big = `SELECT order_id FROM ${ORDERS} LIMIT 3000 /* ${m} */`;
    expect((await postJson('/v1/data/query', 'brand', { sql: big })).status).toBe(200);
    const run = (await executions(m)).find((r) => z.object({ query: z.string() }).safeParse(r.body).data?.query.includes('LIMIT 3000'));
    const withJob = await env.DB.prepare('SELECT bq_job_id, bq_location, bq_query_id FROM query_log WHERE sql = ?')
      .bind(big)
      .first<{ bq_job_id: string | null; bq_location: string | null }>();
    expect(run?.answer?.jobId).toMatch(/\S/);
    expect(withJob).toMatchObject({ bq_job_id: expect.stringMatching(/\S/), bq_location: 'US' });
  });
});

describe('a run that may outlive the call (overtime: a plain MCP run_query)', () => {
  const overtimeRun = async (adopt: (job: JobRef, reserved: number) => Promise<string>) => {
    const m = marker();
    await arm({ kind: 'slowJob', ms: 60_000, match: { sql: m, dryRun: false } });
    const { ctx, settled } = setup();
    const sql = `SELECT order_id FROM ${ORDERS} WHERE order_date < CURRENT_DATE() /* ${m} */`;
    let handed: JobRef | null = null;
    const outcome = await runQuery(
      ctx,
      { sql, brandId: 'brand_acme' },
      {
        rowCap: 200,
        ...cutAtFive,
        overtime: {
          waitMs: 300,
          jobTimeoutMs: 1_800_000,
          adopt: (run, job) => {
            handed = job;
            return adopt(job, run.ticket.reservedBytes);
          },
        },
      },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    /** The warehouse calls of this run: those naming its SQL, and those naming its job (polls, jobs.get, cancel). */
    const calls = async () => {
      const all = z
        .object({ requests: z.array(Entry.extend({ path: z.string() })) })
        .parse(await (await fetch(`${WH}/__requests?limit=500`)).json()).requests;
      const jobId = (handed as JobRef | null)?.jobId ?? '-';
      return all.filter((e) => JSON.stringify(e.body ?? {}).includes(m) || e.path.includes(jobId));
    };
    return { outcome, handed: handed as JobRef | null, calls, settled };
  };

  it('past the wait the job is not cancelled but handed, with the ticket, to the long run: one jobs.query under its jobTimeoutMs', async () => {
    let reserved = 0;
    const { outcome, handed, calls, settled } = await overtimeRun(async (_job, r) => {
      reserved = r;
      return 'qj_adopted';
    });
    expect(outcome).toBeInstanceOf(HandedOff);
    expect((outcome as HandedOff).handle).toBe('qj_adopted');
    // The long run owns the ticket now: this run settled nothing, so the reservation stands until the record ends.
    expect(reserved).toBeGreaterThan(0);
    expect(await settled()).toBe(reserved);
    const all = await calls();
    const runs = all.filter((c) => c.op === 'query' || (c.op === 'insert' && !DryRun.safeParse(c.body).success));
    expect(runs.map((c) => c.op)).toEqual(['query']);
    expect(runs[0]!.body).toMatchObject({ jobCreationMode: 'JOB_CREATION_REQUIRED', jobTimeoutMs: '1800000' });
    expect(handed?.jobId).toBe(runs[0]!.answer?.jobId);
    expect(all.map((c) => c.op)).not.toContain('cancel');
    await createWarehouseClient(env).cancelJob(handed!, { brandId: 'brand_acme', requestId: 'req_cleanup', labels: {} });
  }, 30_000);

  it('a long run that cannot take the job (nothing recorded): the job is cancelled, and the run settles what it billed', async () => {
    const { outcome, handed, calls, settled } = await overtimeRun(async () => {
      throw new ApiError('USAGE_LIMIT_EXCEEDED', 'too many running');
    });
    expect(outcome).toBeInstanceOf(ApiError);
    expect((outcome as ApiError).code).toBe('USAGE_LIMIT_EXCEEDED');
    const bytes = await settled();
    expect((await calls()).map((c) => c.op)).toContain('cancel');
    const state = await createWarehouseClient(env).jobStatus(handed!, { brandId: 'brand_acme', requestId: 'req_check', labels: {} });
    expect(state.state).toBe('DONE');
    expect(bytes).toBe(state.totalBytesBilled);
  }, 30_000);
});
