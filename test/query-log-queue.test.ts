// query_log rows delivered through the Queues consumer in batches (QUERY_LOG_DELIVERY = "queue", the deployed
// default): many runs at once, nothing killed, every run's row arrives exactly once. The Worker is called with the
// queued setting (the suite's bindings say "direct"); the queue and its consumer are the pool's real ones.
import { createExecutionContext, createMessageBatch, env, getQueueResult, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { queryLogColumn, QueryLogSchema, type QueryLogRow } from '../src/features/query/query-log';
import { seedDemo, TEST_KEYS } from './seed';

const queued = { ...env, QUERY_LOG_DELIVERY: 'queue' };

async function run(body: unknown): Promise<string> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request('https://api.test/v1/data/query', {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEYS.brand}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    queued,
    ctx,
  );
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return res.headers.get('x-request-id') ?? '';
}

async function loggedRequests(ids: string[]): Promise<Map<string, number>> {
  const { results } = await env.DB.prepare(
    'SELECT request_id, COUNT(*) AS n FROM query_log WHERE request_id IN (SELECT value FROM json_each(?)) GROUP BY request_id',
  )
    .bind(JSON.stringify(ids))
    .all<{ request_id: string; n: number }>();
  return new Map(results.map((r) => [r.request_id, r.n]));
}

beforeAll(async () => {
  await seedDemo();
});

describe('query_log through the queue', () => {
  it('writes one row per run for 60 runs fired at once, accepted and refused alike', async () => {
    const before = await env.DB.prepare('SELECT COUNT(*) AS n FROM query_log').first<number>('n');
    const bodies = Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0 ? { sql: 'SELECT COUNT(*) AS n FROM `service-v1.acme.fact__orders`' } : { sql: `DELETE FROM t${i}` },
    );
    const ids = await Promise.all(bodies.map(run));
    expect(new Set(ids).size).toBe(60);
    const end = Date.now() + 30_000;
    let logged = await loggedRequests(ids);
    while (logged.size < ids.length && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 250));
      logged = await loggedRequests(ids);
    }
    expect(logged.size).toBe(60);
    expect([...logged.values()].every((n) => n === 1)).toBe(true);
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM query_log').first<number>('n')).toBe((before ?? 0) + 60);
    const outcomes = await env.DB.prepare(
      'SELECT outcome, COUNT(*) AS n FROM query_log WHERE request_id IN (SELECT value FROM json_each(?)) GROUP BY outcome ORDER BY outcome',
    )
      .bind(JSON.stringify(ids))
      .all<{ outcome: string; n: number }>();
    // 20 runs and 40 refusals (the guard's): all logged.
    expect(outcomes.results.reduce((a, r) => a + r.n, 0)).toBe(60);
    expect(outcomes.results.find((r) => r.outcome === 'OK')?.n).toBe(20);
  }, 60_000);

  it('a redelivered row is written once; a message that is not a row is dropped and logged, not retried', async () => {
    const row: QueryLogRow = {
      kind: 'query-log',
      id: 'ql_redelivered',
      requestId: 'req_redelivered',
      principalKind: 'key',
      principalId: 'key_demo_brand',
      orgId: 'org_demo',
      userId: null,
      brandId: 'brand_acme',
      queryId: null,
      period: null,
      sql: 'SELECT 1',
      dryRun: 0,
      transport: 'rest',
      outcome: 'OK',
      bytesProcessed: 1,
      bytesBilled: 1,
      rowCount: 1,
      durationMs: 3,
      createdAt: Date.now(),
    };
    for (const attempts of [1, 2]) {
      const batch = createMessageBatch('warehouse-query-api-query-log', [
        { id: `m-${attempts}`, timestamp: new Date(), attempts, body: row },
        { id: `bad-${attempts}`, timestamp: new Date(), attempts, body: { kind: 'query-log', id: 7 } },
      ]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env);
      const result = await getQueueResult(batch, ctx);
      expect(result.explicitAcks.sort()).toEqual([`bad-${attempts}`, `m-${attempts}`]);
      expect(result.retryMessages).toEqual([]);
    }
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM query_log WHERE id = 'ql_redelivered'").first<number>('n')).toBe(1);
  });
});

describe('the query_log row, defined once', () => {
  it('names every column of the table the migrations made, and no other', async () => {
    const { results } = await env.DB.prepare("SELECT name FROM pragma_table_info('query_log')").all<{ name: string }>();
    const defined = Object.keys(QueryLogSchema.shape).map((f) => queryLogColumn(f as keyof typeof QueryLogSchema.shape));
    expect(defined.sort()).toEqual(results.map((r) => r.name).sort());
  });
});
