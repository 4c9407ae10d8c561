// A minimal Worker for bench/query-log.mjs: D1 with the real query_log table and the run path's own INSERT
// (insertQueryLog), so the cost of one audit row per run can be told apart from a no-op request.
import { insertQueryLog } from '../src/features/query/query-log';

interface BenchEnv {
  DB: D1Database;
}

let seq = 0;

/** One run's row, as the run path writes it (a typical stored-query run: SQL of a few hundred bytes). */
function row(db: D1Database): D1PreparedStatement {
  seq++;
  return insertQueryLog(db, {
    id: `ql_bench_${Date.now()}_${seq}`,
    requestId: `req_bench_${seq}`,
    principalKind: 'key',
    principalId: 'key_bench',
    orgId: 'org_bench',
    userId: null,
    brandId: 'brand_bench',
    queryId: 'rq_overview_kpis',
    period: '{"startDate":"2026-10-01","endDate":"2026-10-31"}',
    sql: 'SELECT day, channel, SUM(revenue) AS revenue FROM `service-v1.bench.agg__daily_revenue` WHERE day BETWEEN DATE "2026-10-01" AND DATE "2026-10-31" GROUP BY day, channel ORDER BY day',
    dryRun: 0,
    transport: 'rest',
    outcome: 'OK',
    bytesProcessed: 123_456_789,
    bytesBilled: 125_829_120,
    rowCount: 31,
    durationMs: 412,
    createdAt: Date.now(),
  });
}

export default {
  async fetch(request: Request, env: BenchEnv): Promise<Response> {
    const url = new URL(request.url);
    switch (url.pathname) {
      case '/noop':
        return new Response(null, { status: 204 });
      case '/insert':
        // What the run path does per run: one INSERT (there in waitUntil, here awaited so it can be timed).
        await row(env.DB).run();
        return new Response(null, { status: 204 });
      case '/loop': {
        // Back-to-back inside the Worker, no HTTP: n single-row INSERTs, or the same rows in batches of `batch`.
        const n = Number(url.searchParams.get('n') ?? '1000');
        const batch = Number(url.searchParams.get('batch') ?? '1');
        const start = performance.now();
        for (let i = 0; i < n; i += batch) {
          if (batch === 1) await row(env.DB).run();
          else await env.DB.batch(Array.from({ length: Math.min(batch, n - i) }, () => row(env.DB)));
        }
        return Response.json({ n, batch, totalMs: performance.now() - start });
      }
      case '/count':
        return Response.json(await env.DB.prepare('SELECT COUNT(*) AS n FROM query_log').first());
      default:
        return new Response('not found', { status: 404 });
    }
  },
} satisfies ExportedHandler<BenchEnv>;
