import { describe, expect, it } from 'vitest';
import {
  BUCKET_MS,
  bucketExpiry,
  bucketStart,
  checkRun,
  freeAt,
  rateLimitState,
  secondsUntil,
  usageAt,
  WINDOW_MS,
  type Bucket,
} from '../src/usage/window';

// A fixed instant on a minute boundary plus 30 s, so bucket rounding is visible.
const T0 = Date.UTC(2026, 0, 15, 12, 0, 30);
const MIN = 60_000;
const HOUR = 60 * MIN;

const b = (start: number, runs: number, bytes = 0): Bucket => ({ start, runs, bytes });

describe('bucket arithmetic', () => {
  it.each([
    [T0, Date.UTC(2026, 0, 15, 12, 0, 0)],
    [Date.UTC(2026, 0, 15, 12, 0, 0), Date.UTC(2026, 0, 15, 12, 0, 0)],
    [Date.UTC(2026, 0, 15, 12, 0, 59, 999), Date.UTC(2026, 0, 15, 12, 0, 0)],
    [Date.UTC(2026, 0, 15, 12, 1, 0), Date.UTC(2026, 0, 15, 12, 1, 0)],
  ])('bucketStart(%i) = %i', (t, start) => {
    expect(bucketStart(t)).toBe(start);
  });

  it('a bucket expires once its last possible run is 24 h old, never earlier', () => {
    const start = bucketStart(T0);
    expect(bucketExpiry(start)).toBe(start + BUCKET_MS + WINDOW_MS);
    // The latest run that can sit in the bucket is start + 59.999 s; it must still count 24 h after itself.
    expect(bucketExpiry(start) - (start + BUCKET_MS - 1)).toBeGreaterThan(WINDOW_MS);
  });

  it('secondsUntil rounds up and never goes negative', () => {
    expect(secondsUntil(T0 + 1, T0)).toBe(1);
    expect(secondsUntil(T0 + 1000, T0)).toBe(1);
    expect(secondsUntil(T0 + 1001, T0)).toBe(2);
    expect(secondsUntil(T0 - 5000, T0)).toBe(0);
  });
});

describe('rolling 24 h usage', () => {
  const start = bucketStart(T0);
  const buckets = [b(start, 3, 100), b(start + 10 * MIN, 2, 50), b(start + 23 * HOUR, 1, 7)];

  it.each([
    ['right after the runs', T0, { runs: 6, bytes: 157 }],
    ['24 h later: the first bucket is still within its last minute', start + WINDOW_MS + BUCKET_MS - 1, { runs: 6, bytes: 157 }],
    ['the first bucket has left the window', start + WINDOW_MS + BUCKET_MS, { runs: 3, bytes: 57 }],
    ['the second bucket has left too', start + 10 * MIN + WINDOW_MS + BUCKET_MS, { runs: 1, bytes: 7 }],
    ['two days later nothing is counted', start + 2 * WINDOW_MS, { runs: 0, bytes: 0 }],
  ])('%s', (_label, now, expected) => {
    expect(usageAt(buckets, now)).toEqual(expected);
  });

  it('order of buckets does not matter', () => {
    expect(usageAt([...buckets].reverse(), T0)).toEqual({ runs: 6, bytes: 157 });
  });
});

describe('checkRun', () => {
  const start = bucketStart(T0);

  it('allows while both totals are under their limits', () => {
    expect(checkRun([b(start, 4, 99)], { runs: 5, bytes: 100 }, T0)).toBeNull();
  });

  it('refuses on the run count, with the time the oldest needed bucket leaves', () => {
    const buckets = [b(start + 5 * MIN, 2), b(start, 3)];
    const refusal = checkRun(buckets, { runs: 5, bytes: 1_000 }, start + 6 * MIN);
    // 5 runs, limit 5: one run must leave; the oldest bucket (3 runs) leaves first.
    expect(refusal).toEqual({ limit: 'runs', limitValue: 5, used: 5, retryAt: bucketExpiry(start) });
  });

  it('needs several buckets to leave when the limit was lowered below usage', () => {
    const buckets = [b(start, 3), b(start + MIN, 3), b(start + 2 * MIN, 3)];
    const refusal = checkRun(buckets, { runs: 4, bytes: 1_000 }, start + 3 * MIN);
    // 9 used, limit 4: after the first bucket 6 remain, after the second 3 < 4.
    expect(refusal?.retryAt).toBe(bucketExpiry(start + MIN));
    expect(refusal?.used).toBe(9);
  });

  it('refuses on bytes billed once the byte budget is reached', () => {
    const buckets = [b(start, 1, 600), b(start + HOUR, 1, 400)];
    const refusal = checkRun(buckets, { runs: 100, bytes: 1_000 }, start + 2 * HOUR);
    expect(refusal).toEqual({ limit: 'bytes', limitValue: 1_000, used: 1_000, retryAt: bucketExpiry(start) });
  });

  it('when both limits are exhausted it names the one that frees later', () => {
    // Runs free when the first bucket leaves; bytes only when the second (which holds almost all bytes) leaves.
    const buckets = [b(start, 2, 0), b(start + HOUR, 1, 1_000)];
    const refusal = checkRun(buckets, { runs: 3, bytes: 1_000 }, start + 2 * HOUR);
    expect(refusal).toEqual({ limit: 'bytes', limitValue: 1_000, used: 1_000, retryAt: bucketExpiry(start + HOUR) });
    expect(freeAt(buckets, start + 2 * HOUR, 'runs', 3)).toBe(bucketExpiry(start));
  });

  it('a limit of 0 blocks every run, one full window away', () => {
    const refusal = checkRun([], { runs: 0, bytes: 1_000 }, T0);
    expect(refusal).toEqual({ limit: 'runs', limitValue: 0, used: 0, retryAt: T0 + WINDOW_MS + BUCKET_MS });
  });

  it('expired buckets do not count towards a refusal', () => {
    const buckets = [b(start, 5)];
    expect(checkRun(buckets, { runs: 5, bytes: 1_000 }, bucketExpiry(start))).toBeNull();
  });
});

describe('rateLimitState', () => {
  const start = bucketStart(T0);

  it('empty window: full budget, nothing to reset', () => {
    expect(rateLimitState([], { runs: 10, bytes: 1_000 }, T0)).toEqual({ limit: 10, remaining: 10, resetSeconds: 0 });
  });

  it('remaining counts runs; reset is when the oldest counted run leaves', () => {
    const buckets = [b(start + HOUR, 2), b(start, 3)];
    const now = start + 2 * HOUR;
    expect(rateLimitState(buckets, { runs: 10, bytes: 1_000 }, now)).toEqual({
      limit: 10,
      remaining: 5,
      resetSeconds: (bucketExpiry(start) - now) / 1000,
    });
  });

  it('an exhausted byte budget shows as 0 remaining, resetting when bytes free up', () => {
    const buckets = [b(start, 1, 2_000)];
    expect(rateLimitState(buckets, { runs: 10, bytes: 1_000 }, T0)).toEqual({
      limit: 10,
      remaining: 0,
      resetSeconds: secondsUntil(bucketExpiry(start), T0),
    });
  });

  it('no runs left: reset equals the wait for the next run', () => {
    const buckets = [b(start, 1), b(start + 30 * MIN, 1)];
    const now = start + HOUR;
    expect(rateLimitState(buckets, { runs: 2, bytes: 1_000 }, now)).toEqual({
      limit: 2,
      remaining: 0,
      resetSeconds: (bucketExpiry(start) - now) / 1000,
    });
  });
});
