import { env, runDurableObjectAlarm } from 'cloudflare:test';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJob } from '../src/features/query-jobs/job-store';
import { connectMcp, errorOf, textData } from './mcp-client';
import { addBrandKey, seedDemo, TEST_KEYS, usedBytes } from './seed';
import { warehouseFaults } from './warehouse-faults';

/**
 * A client without tasks (docs/run-query.md, "Long queries"): a plain run_query runs as a synchronous run does;
 * one whose query outlives LONG_QUERY_WAIT_MS (25 s) is not cancelled but recorded as a long query, and answers a
 * pending cursor, which polls (the rows once done) and cancels. The query here takes longer than QUERY_TIMEOUT_MS (30 s), which a synchronous run could not survive.
 */

const WH = env.BIGQUERY_API_BASE;
const ORDERS = '`service-v1.acme.fact__orders`';
const faults = warehouseFaults();
let client: Client;
let other: Client;
let keyId = '';

beforeAll(async () => {
  await seedDemo();
  const key = await addBrandKey('mcp long');
  keyId = key.id;
  client = await connectMcp(key.secret);
  other = await connectMcp(TEST_KEYS.brand);
  // Seeding and two MCP connections: a few seconds alone, more on a loaded machine.
}, 60_000);

afterAll(async () => {
  await Promise.all([client.close(), other.close()]);
});

const slowJob = (marker: string, ms: number) => faults.slowJob(marker, ms);

const Pending = z.strictObject({
  status: z.enum(['running', 'cancelling']),
  jobId: z.string(),
  brandId: z.string(),
  elapsedMs: z.number(),
  bytesProcessed: z.number().nullable(),
  pollAfterMs: z.number(),
  nextCursor: z.string(),
  note: z.string(),
});

/** Executions of the SQL holding `marker` in the warehouse's journal: jobs.query, and jobs.insert but the dry run. */
async function executions(marker: string) {
  const res = await fetch(`${WH}/__requests?${new URLSearchParams({ sql: marker, limit: '500' })}`);
  const Entry = z.object({
    op: z.string(),
    body: z.unknown(),
    answer: z.object({ jobId: z.string().nullish() }).passthrough().nullish(),
  });
  const DryRun = z.object({ configuration: z.object({ dryRun: z.literal(true) }) });
  return z
    .object({ requests: z.array(Entry) })
    .parse(await res.json())
    .requests.filter((r) => r.op === 'query' || (r.op === 'insert' && !DryRun.safeParse(r.body).success));
}

const run = (c: Client, args: Record<string, unknown>) => c.callTool({ name: 'run_query', arguments: args });
const failed = (raw: unknown) => z.object({ isError: z.boolean().optional() }).parse(raw).isError === true;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('run_query past its wait: the pending cursor', () => {
  it('answers pending instead of cancelling; the cursor polls to every row; another key cannot use it; cancel settles', async () => {
    const slow = `pend${crypto.randomUUID().slice(0, 8)}`;
    const doomed = `doom${crypto.randomUUID().slice(0, 8)}`;
    const timeout = Number(env.QUERY_TIMEOUT_MS);
    await slowJob(slow, timeout + 5_000);
    await slowJob(doomed, 600_000);
    // Both calls wait LONG_QUERY_WAIT_MS side by side, then answer pending.
    const [first, second] = await Promise.all([
      run(client, {
        sql: `SELECT order_id FROM ${ORDERS} WHERE order_date = DATE_SUB(CURRENT_DATE(), INTERVAL 3 DAY) /* ${slow} */`,
        maxRows: 500,
      }),
      run(client, { sql: `SELECT order_id FROM ${ORDERS} /* ${doomed} */` }),
    ]);
    const pending = Pending.parse(textData(first));
    expect(pending.status).toBe('running');
    expect(pending.elapsedMs).toBeGreaterThanOrEqual(Number(env.LONG_QUERY_WAIT_MS));
    expect(pending.note).toMatch(/call run_query with only \{"cursor": <nextCursor>\}/);
    const toCancel = Pending.parse(textData(second));

    // Another key: the cursor is not its own (as any foreign cursor), and names nothing.
    const foreign = errorOf(await run(other, { cursor: pending.nextCursor }));
    expect(foreign).toMatchObject({ code: 'VALIDATION' });
    expect(foreign.message).not.toContain(pending.jobId);

    // The same handle cancels the other query; BigQuery stops it and what it billed is settled.
    let answer = await run(client, { cursor: toCancel.nextCursor, cancel: true });
    for (let i = 0; !failed(answer) && i < 60; i++) {
      expect(Pending.parse(textData(answer)).status).toBe('cancelling');
      await sleep(500);
      answer = await run(client, { cursor: toCancel.nextCursor });
    }
    expect(errorOf(answer).code).toBe('QUERY_CANCELLED');
    const cancelledRow = await readJob(env, toCancel.jobId);
    expect(cancelledRow).toMatchObject({ status: 'cancelled' });

    // Polling the slow one: "running" with a suggested wait until it is done (past QUERY_TIMEOUT_MS), then the rows.
    let data: Record<string, unknown> = {};
    for (let i = 0; i < 120; i++) {
      data = textData(await run(client, { cursor: pending.nextCursor, maxRows: 500 }));
      if (!('status' in data)) break;
      expect(Pending.parse(data).pollAfterMs).toBeGreaterThan(0);
      await sleep(1_000);
    }
    const result = z
      .object({ rows: z.array(z.record(z.string(), z.unknown())), totalRows: z.number(), nextCursor: z.string().nullable() })
      .passthrough()
      .parse(data);
    const done = await readJob(env, pending.jobId);
    expect(done!.ended_at! - done!.created_at).toBeGreaterThan(timeout);
    const rows = [...result.rows];
    let cursor = result.nextCursor;
    for (let pages = 0; cursor !== null; pages++) {
      expect(pages).toBeLessThan(100);
      const page = z
        .object({ rows: z.array(z.record(z.string(), z.unknown())), nextCursor: z.string().nullable() })
        .passthrough()
        .parse(textData(await run(client, { cursor, maxRows: 2000 })));
      rows.push(...page.rows);
      cursor = page.nextCursor;
    }
    expect(rows).toHaveLength(result.totalRows);
    expect(new Set(rows.map((r) => r.order_id)).size).toBe(result.totalRows);

    // Both runs settled to what BigQuery billed, and the history says how each ended.
    const used = await usedBytes(keyId);
    expect(used).toBe(done!.bytes_billed! + cancelledRow!.bytes_billed!);
    const log = await env.DB.prepare('SELECT async_job_id, outcome FROM query_log WHERE async_job_id IN (?, ?) ORDER BY outcome')
      .bind(pending.jobId, toCancel.jobId)
      .all();
    expect(log.results).toEqual([
      { async_job_id: pending.jobId, outcome: 'OK' },
      { async_job_id: toCancel.jobId, outcome: 'QUERY_CANCELLED' },
    ]);
    // Each ran once, as a synchronous run starts (one jobs.query, its job kept), and the record took over that very
    // job when the wait ran out: no second submission, and no other log row for either.
    for (const [marker, row] of [
      [slow, done],
      [doomed, cancelledRow],
    ] as const) {
      const runs = await executions(marker);
      expect(runs.map((r) => r.op)).toEqual(['query']);
      expect(runs[0]!.answer?.jobId).toBe(row!.bq_job_id);
      const rows = await env.DB.prepare('SELECT COUNT(*) AS n FROM query_log WHERE sql LIKE ?').bind(`%${marker}%`).first();
      expect(rows).toEqual({ n: 1 });
    }
  }, 150_000);
});

describe('run_query past its wait, its caller never coming back', () => {
  it('the job is recorded with its alarm before the call answers; the alarm alone ends it, billed once, logged once', async () => {
    const key = await addBrandKey('mcp gone');
    const gone = await connectMcp(key.secret);
    const marker = `gone${crypto.randomUUID().slice(0, 8)}`;
    await slowJob(marker, Number(env.LONG_QUERY_WAIT_MS) + 1_500);
    let pending: z.infer<typeof Pending>;
    try {
      pending = Pending.parse(textData(await run(gone, { sql: `SELECT order_id FROM ${ORDERS} /* ${marker} */` })));
    } finally {
      await gone.close();
    }
    // Recorded before the answer, under the job the call started, with its alarm set (it runs: one was scheduled).
    const [sent] = await executions(marker);
    expect(await readJob(env, pending.jobId)).toMatchObject({ status: 'running', bq_job_id: sent!.answer?.jobId });
    const stub = env.QUERY_JOB_ALARM.getByName(pending.jobId);
    let row = await readJob(env, pending.jobId);
    for (let i = 0; i < 60 && row?.status === 'running'; i++) {
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      row = await readJob(env, pending.jobId);
      if (row?.status === 'running') await sleep(250);
    }
    expect(row).toMatchObject({ status: 'done' });
    expect(row!.bytes_billed).toBeGreaterThan(0);
    let used = await usedBytes(key.id);
    for (let i = 0; used !== row!.bytes_billed && i < 40; i++) {
      await sleep(250);
      used = await usedBytes(key.id);
    }
    expect(used).toBe(row!.bytes_billed);
    const log = await env.DB.prepare('SELECT async_job_id, outcome, bq_job_id FROM query_log WHERE sql LIKE ?').bind(`%${marker}%`).all();
    expect(log.results).toEqual([{ async_job_id: pending.jobId, outcome: 'OK', bq_job_id: sent!.answer?.jobId }]);
    expect((await executions(marker)).map((e) => e.op)).toEqual(['query']);
  }, 60_000);
});
