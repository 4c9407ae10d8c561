// A minimal Worker for bench/usage.mjs: the real UsageLimiter object and the real acquireRun/settleRun, with
// nothing else on the path, so the time they add to a run can be told apart from a no-op request.
import type { Principal } from '../src/auth/principal';
import type { Env } from '../src/env';
import { acquireRun, settleRun } from '../src/usage/usage';
import { BUCKET_MS, WINDOW_MS } from '../src/usage/window';

export { UsageLimiter } from '../src/usage/usage-limiter';

/** Limits high enough that the benchmark never hits them: it measures the bookkeeping, not refusals. */
function principal(id: string): Principal {
  return {
    kind: 'key',
    id,
    label: 'bench',
    orgId: null,
    scope: 'brand',
    brandIds: [],
    limits: { maxBytesBilled: 1e12, dailyQueries: 1e9, dailyBytes: 1e15, checksPerMinute: 1e9, pageReadsPerMinute: 1e9 },
  };
}

/** What runQuery adds per run: one acquire before execution, one settle after it. */
async function oneRun(env: Env, p: Principal, now: number): Promise<void> {
  const ticket = await acquireRun(env, p, now, { consume: true });
  await settleRun(env, p, ticket, { bytesBilled: 1_048_576 });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const key = url.searchParams.get('key') ?? 'bench';
    switch (url.pathname) {
      case '/noop':
        return new Response(null, { status: 204 });
      case '/acquire':
        // The part on a response's critical path when the caller settles in waitUntil.
        await acquireRun(env, principal(key), Date.now(), { consume: true });
        return new Response(null, { status: 204 });
      case '/run':
        await oneRun(env, principal(key), Date.now());
        return new Response(null, { status: 204 });
      case '/fill': {
        // One run in every minute of the last 24 h: the largest window an object can hold (1441 buckets).
        const now = Date.now();
        let runs = 0;
        for (let t = now - WINDOW_MS + BUCKET_MS; t <= now; t += BUCKET_MS) {
          await oneRun(env, principal(key), t);
          runs++;
        }
        return Response.json({ runs });
      }
      case '/loop': {
        // Back-to-back runs inside the Worker: no HTTP on the path. The clock only advances across I/O in
        // workerd, which each RPC is, so the total over n runs is exact even if single samples are coarse.
        const n = Number(url.searchParams.get('n') ?? '1000');
        const start = performance.now();
        for (let i = 0; i < n; i++) await oneRun(env, principal(key), Date.now());
        return Response.json({ n, totalMs: performance.now() - start });
      }
      default:
        return new Response('not found', { status: 404 });
    }
  },
} satisfies ExportedHandler<Env>;
