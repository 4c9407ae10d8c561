// A minimal Worker for bench/query-log.mjs: D1 with the real query_log table and the run path's own INSERT
// (QUERY_LOG_INSERT), so the cost of one audit row per run can be told apart from a no-op request.
import { QUERY_LOG_INSERT } from '../src/features/query/query-log';

interface BenchEnv {
  DB: D1Database;
}

let seq = 0;

/** One run's row, as writeLog binds it (a typical stored-query run: SQL of a few hundred bytes). */
function row(db: D1Database): D1PreparedStatement {
  seq++;
  return db.prepare(QUERY_LOG_INSERT).bind(
    `ql_bench_${Date.now()}_${seq}`,
    `req_bench_${seq}`,
    'key',
    'key_bench',
    'org_bench',
    null,
    'brand_bench',
    'rq_overview_kpis',
    '{"startDate":"2026-10-01","endDate":"2026-10-31"}',
    'SELECT day, channel, SUM(revenue) AS revenue FROM `service-v1.bench.agg__daily_revenue` WHERE day BETWEEN DATE "2026-10-01" AND DATE "2026-10-31" GROUP BY day, channel ORDER BY day',
    0,
    'rest',
    'OK',
    123_456_789,
    125_829_120,
    31,
    412,
    Date.now(),
    // Migration 0008's columns: a job-less fast-path run (no message, client, job or long run; its queryId).
    null,
    null,
    null,
    'US',
    `query_bench_${seq}`,
    null,
  );
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
