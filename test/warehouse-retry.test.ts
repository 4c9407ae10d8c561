import { describe, expect, it } from 'vitest';
import { sanitizeLabels } from '../src/warehouse/labels';
import { backoffDelay, DEFAULT_RETRY_POLICY, nextRetryDelay, parseRetryAfter, type RetryPolicy } from '../src/warehouse/retry';

const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000, maxTotalDelayMs: 1500 };
const low = () => 0;
const high = () => 0.999999;

describe('backoffDelay', () => {
  it('doubles per attempt, with jitter in the upper half of each step, capped', () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(policy, a, low))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(policy, a, high))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

describe('nextRetryDelay', () => {
  it('retries up to maxAttempts tries in all', () => {
    const st = (attempt: number) => ({ attempt, waitedMs: 0, remainingMs: 60_000 });
    expect(nextRetryDelay(policy, st(1), low)).toBe(50);
    expect(nextRetryDelay(policy, st(3), low)).toBe(200);
    expect(nextRetryDelay(policy, st(4), low)).toBeNull();
  });

  it('gives up when the total wait would exceed its budget', () => {
    expect(nextRetryDelay(policy, { attempt: 3, waitedMs: 1200, remainingMs: 60_000 }, high)).toBeNull();
    expect(nextRetryDelay(policy, { attempt: 3, waitedMs: 1100, remainingMs: 60_000 }, high)).toBe(400);
  });

  it('gives up rather than sleep past the deadline', () => {
    expect(nextRetryDelay(policy, { attempt: 1, waitedMs: 0, remainingMs: 80 }, high)).toBeNull();
    expect(nextRetryDelay(policy, { attempt: 1, waitedMs: 0, remainingMs: 101 }, high)).toBe(100);
  });

  it('honours a longer Retry-After, within the per-wait cap', () => {
    expect(nextRetryDelay(policy, { attempt: 1, waitedMs: 0, remainingMs: 60_000, retryAfterMs: 700 }, low)).toBe(700);
    expect(nextRetryDelay(policy, { attempt: 1, waitedMs: 0, remainingMs: 60_000, retryAfterMs: 9000 }, low)).toBe(1000);
    expect(nextRetryDelay(policy, { attempt: 1, waitedMs: 0, remainingMs: 60_000, retryAfterMs: 10 }, low)).toBe(50);
  });

  it("the default policy backs off as Google's clients do: from about 1 s, doubling, the deadline ending it (N7)", () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 32_000, maxTotalDelayMs: 60_000 });
    const waits: number[] = [];
    for (let attempt = 1; ; attempt++) {
      const d = nextRetryDelay(DEFAULT_RETRY_POLICY, { attempt, waitedMs: waits.reduce((a, b) => a + b, 0), remainingMs: 1e9 }, high);
      if (d === null) break;
      waits.push(d);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000]);
    // Within a 30 s query deadline the waits stop before it, never past it.
    expect(nextRetryDelay(DEFAULT_RETRY_POLICY, { attempt: 5, waitedMs: 15_000, remainingMs: 10_000 }, high)).toBeNull();
  });
});

describe('parseRetryAfter', () => {
  it.each([
    ['3', 3000],
    [' 0 ', 0],
    [null, undefined],
    ['Wed, 21 Oct 2015 07:28:00 GMT', undefined],
    ['-1', undefined],
  ])('%j -> %j', (h, ms) => {
    expect(parseRetryAfter(h)).toBe(ms);
  });
});

describe('sanitizeLabels', () => {
  it('lowercases, replaces characters outside [a-z0-9_-], caps at 63, keys start with a letter', () => {
    expect(
      sanitizeLabels({
        Key_ID: 'key_AbC.123',
        brand: 'brand_acme',
        '9lives': 'x',
        '': 'dropped',
        op: 'run query/REST',
        long: 'v'.repeat(100),
      }),
    ).toEqual({ key_id: 'key_abc_123', brand: 'brand_acme', l_9lives: 'x', op: 'run_query_rest', long: 'v'.repeat(63) });
  });

  it('keeps at most 64 labels', () => {
    const many = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`k${i}`, 'v']));
    expect(Object.keys(sanitizeLabels(many))).toHaveLength(64);
  });
});
