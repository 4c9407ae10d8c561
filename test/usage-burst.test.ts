import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import worker from '../src/index';
import { defaultLimits, generateApiKey } from '../src/auth/api-keys';
import type { PrincipalLimits } from '../src/auth/principal';
import { QUOTA_RETRY_AFTER_SECONDS } from '../src/warehouse/errors';
import { RESERVED_PER_TABLE } from '../src/usage/reservation';
import { peekUsage } from '../src/usage/usage';
import { seedDemo } from './seed';

// The meters under concurrency, against the local warehouse: a burst of runs cannot bill far past the daily byte
// budget, failing dry runs are not free, and a run that was charged and then failed says so.

const MIB = 1024 * 1024;
const WH = env.BIGQUERY_API_BASE;

const RunBody = z.object({ stats: z.object({ totalBytesBilled: z.number(), totalBytesProcessed: z.number() }) });
const ErrorBody = z.object({ error: z.object({ code: z.string(), details: z.unknown().optional() }) });
const Journal = z.object({ requests: z.array(z.object({ op: z.string() })) });

beforeAll(async () => {
  await seedDemo();
});

/** A fresh brand_acme key (so a fresh usage window) with the given limits and, optionally, its own checks rate. */
async function limitedKey(limits: { dailyQueries?: number; dailyBytes?: number }, checksPerMinute?: number) {
  const key = await generateApiKey();
  await env.DB.prepare(
    'INSERT INTO api_keys (id, name, prefix, secret_hash, brand_id, daily_query_limit, daily_bytes_limit, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0)',
  )
    .bind(key.id, 'usage burst', key.prefix, key.secretHash, 'brand_acme', limits.dailyQueries ?? null, limits.dailyBytes ?? null)
    .run();
  if (checksPerMinute !== undefined) {
    await env.DB.prepare('UPDATE api_keys SET checks_per_minute = ? WHERE id = ?').bind(checksPerMinute, key.id).run();
  }
  const effective: PrincipalLimits = { ...defaultLimits(env), ...limits };
  return {
    limits: effective,
    /** POST /v1/data/query through the Worker's own fetch (not SELF, which slows with every request in a workerd). */
    post: (body: Record<string, unknown>) => runQuery(key.secret, body),
    usage: () => peekUsage(env, `key:${key.id}`, effective, Date.now()),
  };
}

async function runQuery(secret: string, body: Record<string, unknown>) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request('http://api.test/v1/data/query', {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    // Caches on as deployed (the suite turns them off): a burst is one key's requests, read once.
    { ...env, AUTH_CACHE_TTL_MS: '60000', CATALOG_CACHE_TTL_MS: '60000' },
    ctx,
  );
  const json: unknown = await res.json();
  // The settle runs in waitUntil: wait for it, so the window read after the burst is final.
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, body: json };
}

/** A query over one small table; `marker` makes its SQL (and so its verdict-cache entry) unique to the test. */
const ordersSql = (marker: string) =>
  `SELECT channel, COUNT(*) AS orders, '${marker}' AS marker FROM \`service-v1.acme.fact__orders\` GROUP BY channel`;

async function burst(n: number, run: () => ReturnType<typeof runQuery>) {
  return Promise.all(Array.from({ length: n }, run));
}

/** Runs admitted and bytes billed in a burst, with the reservation one of its runs takes. */
function billedIn(results: Awaited<ReturnType<typeof runQuery>>[]) {
  const ok = results.filter((r) => r.status === 200).map((r) => RunBody.parse(r.body).stats);
  return { runs: ok.length, billed: ok.reduce((s, r) => s + r.totalBytesBilled, 0), estimate: ok[0]?.totalBytesProcessed ?? 0 };
}

describe('daily bytes under a burst', () => {
  it.each([30, 300])('%i parallel runs on a 50 MiB-a-day key bill at most the limit plus one run', { timeout: 60_000 }, async (n) => {
    const k = await limitedKey({ dailyBytes: 50 * MIB });
    const sql = ordersSql(`burst${n}-${crypto.randomUUID()}`);
    // A dry run first puts the verdict in the cache, so every run of the burst goes straight to its admission
    // (the checks meter is exercised below).
    expect((await k.post({ sql, dryRun: true })).status).toBe(200);

    const results = await burst(n, () => k.post({ sql }));
    const { runs, billed, estimate } = billedIn(results);
    const oneRun = estimate + RESERVED_PER_TABLE;
    // The local warehouse bills 10 MiB per table read: without reservations all n runs got in (n x 10 MiB).
    expect(runs).toBeGreaterThan(0);
    expect(billed).toBeLessThanOrEqual(k.limits.dailyBytes + oneRun);
    const refused = results.filter((r) => r.status !== 200).map((r) => ({ status: r.status, error: ErrorBody.parse(r.body).error }));
    expect(refused).toHaveLength(n - runs);
    // Refused on the byte budget; on a loaded machine an admission can also outlast USAGE_TIMEOUT_MS and fail
    // closed (503 USAGE_UNAVAILABLE, nothing run), or an admitted run can find the shared local warehouse too busy
    // to answer (503 WAREHOUSE_UNAVAILABLE, charged). Either way nothing past the budget ran.
    const unavailable = refused.filter((r) => r.status === 503);
    for (const r of refused) {
      if (r.status === 503) expect(['USAGE_UNAVAILABLE', 'WAREHOUSE_UNAVAILABLE']).toContain(r.error.code);
      else expect(r).toMatchObject({ status: 429, error: { code: 'USAGE_LIMIT_EXCEEDED', details: { limit: 'bytes' } } });
    }
    expect(refused.length - unavailable.length).toBeGreaterThan(0);
    const window = await k.usage();
    expect(window.bytes.used).toBeLessThanOrEqual(k.limits.dailyBytes + oneRun);
    // Once settled, the window holds exactly the bytes billed: the reservations are gone. (An admission that timed
    // out on our side may still have been counted by the object, with its reservation: then only the bound holds.)
    if (unavailable.length === 0) expect(window).toMatchObject({ bytes: { used: billed }, runs: { used: runs } });
  });

  it('sequential runs stop at the budget as before, and the budget left is reported net of the reservation', async () => {
    const k = await limitedKey({ dailyBytes: 20 * MIB });
    // A new text each time: a repeat would be a query-cache hit, billing 0 bytes (as on BigQuery).
    const sql = () => ordersSql(`seq-${crypto.randomUUID()}`);
    const first = await k.post({ sql: sql() });
    expect(first.status).toBe(200);
    const billed = RunBody.parse(first.body).stats.totalBytesBilled;
    expect(billed).toBeGreaterThan(0);
    expect((await k.usage()).bytes.used).toBe(billed);
    expect((await k.post({ sql: sql() })).status).toBe(200);
    const third = await k.post({ sql: sql() });
    expect(third.status).toBe(429);
    expect((await k.usage()).bytes.used).toBe(2 * billed);
  });
});

describe('failed dry runs are metered', () => {
  it('300 requests whose warehouse dry run fails on a 5-runs-a-day key do not make 300 warehouse calls', { timeout: 60_000 }, async () => {
    const checksPerMinute = 10;
    const k = await limitedKey({ dailyQueries: 5 }, checksPerMinute);
    const marker = `nocol_${crypto.randomUUID().replace(/-/g, '')}`;
    // Passes the guard; BigQuery (and the local warehouse) refuse it in the dry run: no such column.
    const sql = `SELECT ${marker} FROM \`service-v1.acme.fact__orders\``;
    const results = await burst(300, () => k.post({ sql }));
    const codes = new Map<string, number>();
    for (const r of results) {
      const code = ErrorBody.parse(r.body).error.code;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    const failed = codes.get('QUERY_FAILED') ?? 0;
    // Each dry run took a checks token first: at most a bucket's worth (plus what refills during the test) ran.
    expect(failed).toBeGreaterThan(0);
    expect(failed).toBeLessThanOrEqual(checksPerMinute + 3);
    // The rest were refused by the meter (or, on a loaded machine, failed closed before it answered: 503).
    expect((codes.get('USAGE_LIMIT_EXCEEDED') ?? 0) + (codes.get('USAGE_UNAVAILABLE') ?? 0)).toBe(300 - failed);
    expect(codes.get('USAGE_LIMIT_EXCEEDED')).toBeGreaterThan(0);
    const journal = Journal.parse(await (await fetch(`${WH}/__requests?${new URLSearchParams({ sql: marker, limit: '1000' })}`)).json());
    expect(journal.requests.length).toBe(failed);
    // No run was counted: the run budget is untouched.
    expect((await k.usage()).runs.used).toBe(0);
  });

  it('a dry run the cache answers takes no token; one it does not answer takes one, whatever the outcome', async () => {
    const k = await limitedKey({}, 2);
    const sql = ordersSql(`checks-${crypto.randomUUID()}`);
    expect((await k.post({ sql })).status).toBe(200); // token 1: the dry run; the verdict is cached
    for (let i = 0; i < 3; i++) expect((await k.post({ sql })).status).toBe(200); // cache hits: no token
    const other = `SELECT nocol_${crypto.randomUUID().replace(/-/g, '')} FROM \`service-v1.acme.fact__orders\``;
    expect((await k.post({ sql: other })).status).toBe(400); // token 2, spent on a failing dry run
    const third = await k.post({ sql: other });
    expect(third.status).toBe(429);
    expect(ErrorBody.parse(third.body).error).toMatchObject({ code: 'USAGE_LIMIT_EXCEEDED', details: { limit: 'checks' } });
  });
});

describe('a run charged and then failed', () => {
  it("says so: RateLimit-* of the run it spent, and the warehouse's Retry-After on a 503", async () => {
    const k = await limitedKey({ dailyQueries: 5 });
    const marker = `charged-${crypto.randomUUID()}`;
    const sql = ordersSql(marker);
    // A refusal of the submission (a 5xx would be answered through a client-id job instead): quotas reset over
    // minutes, so the caller is told to wait that long, not the few seconds of a transient outage.
    const fault = await fetch(`${WH}/__faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'quotaExceeded', persistent: true, match: { op: 'query', sql: marker } }),
    });
    expect(fault.status).toBe(201);
    const { id } = z.object({ id: z.string() }).parse(await fault.json());
    try {
      const res = await k.post({ sql });
      expect(res.status).toBe(503);
      expect(ErrorBody.parse(res.body).error.code).toBe('WAREHOUSE_UNAVAILABLE');
      expect(res.headers.get('RateLimit-Limit')).toBe('5');
      expect(res.headers.get('RateLimit-Remaining')).toBe('4');
      expect(res.headers.get('Retry-After')).toBe(String(QUOTA_RETRY_AFTER_SECONDS));
      expect((await k.usage()).runs.used).toBe(1);
    } finally {
      await fetch(`${WH}/__faults/${id}`, { method: 'DELETE' });
    }
  });

  it('a refusal before admission carries no run headers (nothing was charged)', async () => {
    const k = await limitedKey({ dailyQueries: 5 });
    const res = await k.post({ sql: 'SELECT * FROM `service-v1.globex.fact__orders`' });
    expect(res.status).toBe(403);
    expect(res.headers.get('RateLimit-Remaining')).toBeNull();
    expect((await k.usage()).runs.used).toBe(0);
  });
});
