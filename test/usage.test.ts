import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { usageKey, type Principal } from '../src/auth/principal';
import { ApiError } from '../src/errors';
import { RateLimitHeaders, UsageLimitExceededHeaders } from '../src/usage/rate-limit-headers';
import { acquireRun, peekUsage, settleRun, type UsageTicket } from '../src/usage/usage';
import type { UsageLimiter } from '../src/usage/usage-limiter';
import { BUCKET_MS, bucketExpiry, bucketStart, WINDOW_MS } from '../src/usage/window';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 30);
const MIN = 60_000;

let n = 0;
/** A principal with its own fresh window (unique id per call). */
function principal(
  limits: Partial<Principal['limits']> = {},
  kind: Principal['kind'] = 'key',
  id = `key_usage${Date.now()}${n++}`,
): Principal {
  return {
    kind,
    id,
    label: 'usage test',
    orgId: 'org_1',
    scope: 'brand',
    brandIds: ['brand_1'],
    limits: {
      maxBytesBilled: 1_000_000,
      dailyQueries: 3,
      dailyBytes: 10_000,
      checksPerMinute: 60,
      pageReadsPerMinute: 60,
      maxRunningJobs: 2,
      jobTimeoutMs: 1_800_000,
      ...limits,
    },
  };
}

/** Runs `fn`, expecting it to throw an ApiError, and returns that error. */
async function apiError(fn: () => Promise<unknown>): Promise<ApiError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError, nothing was thrown');
}

describe('acquireRun', () => {
  it('counts runs and reports RateLimit-* headers on each', async () => {
    const p = principal();
    const first = await acquireRun(env, p, T0, { consume: true });
    expect(first.id).toMatch(/^[0-9a-f]{32}$/);
    const resetSeconds = String((bucketExpiry(bucketStart(T0)) - T0) / 1000);
    // The key's long-query limits ride along (docs/usage-limits.md): running jobs at once and their longest duration.
    const jobs = { 'Jobs-Limit': String(p.limits.maxRunningJobs), 'Job-Timeout': String(p.limits.jobTimeoutMs / 1000) };
    expect(first.headers).toEqual({ 'RateLimit-Limit': '3', 'RateLimit-Remaining': '2', 'RateLimit-Reset': resetSeconds, ...jobs });
    const second = await acquireRun(env, p, T0 + 1000, { consume: true });
    expect(second.headers['RateLimit-Remaining']).toBe('1');
    expect(second.id).not.toBe(first.id);
  });

  it('over the run limit: 429 USAGE_LIMIT_EXCEEDED with Retry-After, RateLimit-* and details', async () => {
    const p = principal();
    for (let i = 0; i < 3; i++) await acquireRun(env, p, T0 + i * MIN, { consume: true });
    const now = T0 + 3 * MIN;
    const err = await apiError(() => acquireRun(env, p, now, { consume: true }));
    const nextRunAt = bucketExpiry(bucketStart(T0));
    expect(err.code).toBe('USAGE_LIMIT_EXCEEDED');
    expect(err.status).toBe(429);
    expect(err.details).toEqual({ limit: 'runs', limitValue: 3, used: 3, resetAt: new Date(nextRunAt).toISOString() });
    expect(err.headers).toEqual({
      'Retry-After': String(Math.ceil((nextRunAt - now) / 1000)),
      'RateLimit-Limit': '3',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': String(Math.ceil((nextRunAt - now) / 1000)),
      'Jobs-Limit': String(p.limits.maxRunningJobs),
      'Job-Timeout': String(p.limits.jobTimeoutMs / 1000),
    });
    expect(err.message).toMatch(/3 query runs in the last 24 hours \(limit 3\)/);
  });

  it('the window rolls: the oldest run frees a slot once it is 24 h old, not at midnight', async () => {
    const p = principal({ dailyQueries: 2 });
    await acquireRun(env, p, T0, { consume: true });
    await acquireRun(env, p, T0 + 6 * 60 * MIN, { consume: true });
    await expect(apiError(() => acquireRun(env, p, T0 + WINDOW_MS, { consume: true }))).resolves.toHaveProperty(
      'code',
      'USAGE_LIMIT_EXCEEDED',
    );
    const later = await acquireRun(env, p, bucketExpiry(bucketStart(T0)), { consume: true });
    expect(later.headers['RateLimit-Remaining']).toBe('0');
  });

  it('dry runs (consume: false) are not counted, carry the headers, and are refused once the budget is spent', async () => {
    const p = principal({ dailyQueries: 2 });
    for (let i = 0; i < 5; i++) {
      const dry = await acquireRun(env, p, T0 + i, { consume: false });
      expect(dry).toMatchObject({ id: null, headers: { 'RateLimit-Limit': '2', 'RateLimit-Remaining': '2', 'RateLimit-Reset': '0' } });
      expect(dry.budget).toMatchObject({ runsLimit: 2, runsRemaining: 2, bytesRemaining: p.limits.dailyBytes });
    }
    await acquireRun(env, p, T0 + 10, { consume: true });
    await acquireRun(env, p, T0 + 20, { consume: true });
    const err = await apiError(() => acquireRun(env, p, T0 + 30, { consume: false }));
    expect(err.code).toBe('USAGE_LIMIT_EXCEEDED');
    expect(err.headers?.['RateLimit-Remaining']).toBe('0');
    expect((await peekUsage(env, usageKey(p), p.limits, T0 + 40)).runs.used).toBe(2);
  });

  it('a limit change on the principal applies at once (limits are not cached in the object)', async () => {
    const p = principal({ dailyQueries: 10 });
    for (let i = 0; i < 4; i++) await acquireRun(env, p, T0 + i, { consume: true });
    const lowered = { ...p, limits: { ...p.limits, dailyQueries: 4 } };
    expect((await apiError(() => acquireRun(env, lowered, T0 + 10, { consume: true }))).details).toMatchObject({
      limit: 'runs',
      used: 4,
      limitValue: 4,
    });
    const raised = { ...p, limits: { ...p.limits, dailyQueries: 5 } };
    expect((await acquireRun(env, raised, T0 + 20, { consume: true })).headers['RateLimit-Remaining']).toBe('0');
  });

  it('each principal has its own window; a key and an OAuth connection with the same id do not share', async () => {
    const key = principal({ dailyQueries: 1 }, 'key', 'shared_id_' + n++);
    const oauth = principal({ dailyQueries: 1 }, 'oauth', key.id);
    await acquireRun(env, key, T0, { consume: true });
    await expect(acquireRun(env, oauth, T0, { consume: true })).resolves.toHaveProperty('headers.RateLimit-Remaining', '0');
    await expect(apiError(() => acquireRun(env, key, T0, { consume: true }))).resolves.toHaveProperty('status', 429);
  });

  it('200 concurrent runs against a limit of 50 let exactly 50 through', async () => {
    const p = principal({ dailyQueries: 50 });
    const results = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => acquireRun(env, p, T0 + i, { consume: true })));
    const passed = results.filter((r): r is PromiseFulfilledResult<UsageTicket> => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(passed).toHaveLength(50);
    expect(refused).toHaveLength(150);
    for (const r of refused) expect(r.reason).toMatchObject({ code: 'USAGE_LIMIT_EXCEEDED', status: 429 });
    expect(new Set(passed.map((r) => r.value.id)).size).toBe(50);
    expect(passed.map((r) => r.value.headers['RateLimit-Remaining']).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 50 }, (_, i) => String(i)),
    );
    expect((await peekUsage(env, usageKey(p), p.limits, T0 + 1000)).runs).toEqual({ used: 50, limit: 50, remaining: 0 });
  });

  it('fails closed with 503 USAGE_UNAVAILABLE when the object does not answer, and never runs unmetered', async () => {
    const p = principal();
    const stub = env.USAGE.getByName(usageKey(p));
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    // Hold the object's input gate shut, as an overloaded or wedged object would, and ask only once it is shut
    // (asking first could reach the object before the gate closes on a busy machine).
    let shut = () => {};
    const gateShut = new Promise<void>((resolve) => (shut = resolve));
    const wedged = runInDurableObject(stub, (_obj: UsageLimiter, state) =>
      state.blockConcurrencyWhile(() => {
        shut();
        return released;
      }),
    );
    await gateShut;
    const err = await apiError(() => acquireRun(env, p, T0, { consume: true, timeoutMs: 200 }));
    release();
    await wedged;
    expect(err.code).toBe('USAGE_UNAVAILABLE');
    expect(err.status).toBe(503);
    expect(err.message).toMatch(/query was not run/);
    expect(String(err.internal)).toMatch(/did not answer within 200 ms/);
  });
});

describe('settleRun', () => {
  /** The usage after one consumed run whose ticket is settled twice with `bytesBilled` (a repeated settle). */
  async function settledTwice(bytesBilled: number) {
    const p = principal();
    const ticket = await acquireRun(env, p, T0, { consume: true });
    await settleRun(env, p, ticket, { bytesBilled });
    await settleRun(env, p, ticket, { bytesBilled });
    return peekUsage(env, usageKey(p), p.limits, T0 + 1000);
  }

  it('adds the bytes billed once per ticket; a repeated settle is a no-op', async () => {
    const snap = await settledTwice(4_000);
    expect(snap.runs.used).toBe(1);
    expect(snap.bytes).toEqual({ used: 4_000, limit: 10_000, remaining: 6_000 });
  });

  it('a run that failed in the warehouse stays counted exactly once', async () => {
    // The warehouse failed: nothing billed. The lead's runQuery settles with 0 bytes.
    const snap = await settledTwice(0);
    expect(snap.runs.used).toBe(1);
    expect(snap.bytes.used).toBe(0);
  });

  it('settling a dry-run ticket does nothing', async () => {
    const p = principal();
    const dry = await acquireRun(env, p, T0, { consume: false });
    await settleRun(env, p, dry, { bytesBilled: 99_999 });
    expect((await peekUsage(env, usageKey(p), p.limits, T0)).bytes.used).toBe(0);
  });

  it('once the bytes billed reach the byte budget, runs are refused with limit "bytes" and RateLimit-Remaining 0', async () => {
    const p = principal({ dailyQueries: 100, dailyBytes: 10_000 });
    const a = await acquireRun(env, p, T0, { consume: true });
    await settleRun(env, p, a, { bytesBilled: 6_000 });
    const b = await acquireRun(env, p, T0 + MIN, { consume: true });
    expect(b.headers['RateLimit-Remaining']).toBe('98');
    await settleRun(env, p, b, { bytesBilled: 4_000 });
    const now = T0 + 2 * MIN;
    const err = await apiError(() => acquireRun(env, p, now, { consume: true }));
    // 10,000 bytes billed, limit 10,000: the first run's 6,000 must leave before another run is let in.
    const nextRunAt = bucketExpiry(bucketStart(T0));
    expect(err.details).toEqual({ limit: 'bytes', limitValue: 10_000, used: 10_000, resetAt: new Date(nextRunAt).toISOString() });
    expect(err.headers).toMatchObject({
      'Retry-After': String(Math.ceil((nextRunAt - now) / 1000)),
      'RateLimit-Remaining': '0',
      'RateLimit-Limit': '100',
    });
    const dry = await apiError(() => acquireRun(env, p, now, { consume: false }));
    expect(dry.details).toMatchObject({ limit: 'bytes' });
  });
});

describe('peekUsage', () => {
  it('shows the window without counting, including when and why runs are blocked', async () => {
    const p = principal({ dailyQueries: 2 });
    const empty = await peekUsage(env, usageKey(p), p.limits, T0);
    expect(empty).toEqual({
      windowMs: WINDOW_MS,
      runs: { used: 0, limit: 2, remaining: 2 },
      bytes: { used: 0, limit: 10_000, remaining: 10_000 },
      blockedUntil: null,
      blockedBy: null,
    });
    const t = await acquireRun(env, p, T0, { consume: true });
    await settleRun(env, p, t, { bytesBilled: 123 });
    await acquireRun(env, p, T0 + MIN, { consume: true });
    const full = await peekUsage(env, usageKey(p), p.limits, T0 + 2 * MIN);
    expect(full).toEqual({
      windowMs: WINDOW_MS,
      runs: { used: 2, limit: 2, remaining: 0 },
      bytes: { used: 123, limit: 10_000, remaining: 9_877 },
      blockedUntil: new Date(bucketStart(T0) + WINDOW_MS + BUCKET_MS).toISOString(),
      blockedBy: 'runs',
    });
    // Peeking did not count anything.
    expect((await peekUsage(env, usageKey(p), p.limits, T0 + 2 * MIN)).runs.used).toBe(2);
  });
});

describe('OpenAPI header descriptions', () => {
  it('name exactly the headers acquireRun puts on runs and on the 429', async () => {
    const p = principal({ dailyQueries: 1 });
    const ok = await acquireRun(env, p, T0, { consume: true });
    const refused = await apiError(() => acquireRun(env, p, T0, { consume: true }));
    const documented = (schema: z.ZodObject) =>
      Object.keys(schema.shape)
        .filter((h) => h !== 'x-request-id')
        .sort();
    expect(documented(RateLimitHeaders)).toEqual(Object.keys(ok.headers).sort());
    expect(documented(UsageLimitExceededHeaders)).toEqual(Object.keys(refused.headers ?? {}).sort());
  });

  it('render as response headers in the OpenAPI 3.1 document', () => {
    const app = new OpenAPIHono();
    const route = createRoute({
      method: 'post',
      path: '/run',
      responses: {
        200: { description: 'ok', headers: RateLimitHeaders },
        429: { description: 'over', headers: UsageLimitExceededHeaders },
      },
    });
    app.openapi(route, (c) => c.body(null, 200));
    const doc = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '1' } });
    const responses = doc.paths?.['/run']?.post?.responses ?? {};
    const names = (status: string) => Object.keys((responses[status] as { headers?: object }).headers ?? {}).sort();
    const jobs = ['Job-Timeout', 'Jobs-Limit'];
    expect(names('200')).toEqual([...jobs, 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'x-request-id']);
    expect(names('429')).toEqual([...jobs, 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'x-request-id']);
  });
});
