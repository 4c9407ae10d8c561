/**
 * Rolling 24-hour usage window: pure arithmetic, no I/O, no clock (`now` is always an argument).
 *
 * Runs and bytes are grouped into one-minute buckets keyed by the bucket's start, so one principal's window is at
 * most WINDOW_MS / BUCKET_MS + 1 = 1441 buckets however many runs it makes. A bucket stays in the window until every
 * run in it is at least 24 hours old (`bucketExpiry`), so a run is counted for between 24 h and 24 h + 1 min:
 * the rounding always errs towards counting, never towards letting an extra run through.
 */

/** Length of the rolling window: 24 hours. */
export const WINDOW_MS = 24 * 60 * 60 * 1000;
/** Bucket width: one minute. Bounds storage at 1441 rows per principal and rounds expiry up by under a minute. */
export const BUCKET_MS = 60 * 1000;

/** Runs acquired and bytes billed in one bucket `[start, start + BUCKET_MS)`. */
export interface Bucket {
  start: number;
  runs: number;
  bytes: number;
}

/** What a principal may use per rolling window. A value <= 0 blocks every run. */
export interface Budget {
  runs: number;
  bytes: number;
}

export interface WindowUsage {
  runs: number;
  bytes: number;
}

export type LimitKind = 'runs' | 'bytes';

/** Why a run is refused, and when the window next lets one in. */
export interface Refusal {
  limit: LimitKind;
  limitValue: number;
  used: number;
  /** Earliest time (ms) at which the window lets the next run in. */
  retryAt: number;
}

/** What the RateLimit-* headers report, derived from the run-count limit and the byte budget. */
export interface RateLimitState {
  limit: number;
  /** Runs still allowed now; 0 whenever either limit is exhausted. */
  remaining: number;
  /** Seconds until `remaining` next goes up (0 when nothing is counted). */
  resetSeconds: number;
}

/** Start of the bucket that holds time `t`. */
export function bucketStart(t: number): number {
  return Math.floor(t / BUCKET_MS) * BUCKET_MS;
}

/** First moment at which every run in the bucket starting at `start` is at least WINDOW_MS old. */
export function bucketExpiry(start: number): number {
  return start + BUCKET_MS + WINDOW_MS;
}

/** True while the bucket still counts against the window at `now`. */
export function isLive(bucket: Bucket, now: number): boolean {
  return bucketExpiry(bucket.start) > now;
}

/** Whole seconds from `now` until `at`, rounded up, never negative. */
export function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Runs and bytes counted in the window at `now` (buckets in any order; expired ones are ignored). */
export function usageAt(buckets: Iterable<Bucket>, now: number): WindowUsage {
  let runs = 0;
  let bytes = 0;
  for (const b of buckets) {
    if (!isLive(b, now)) continue;
    runs += b.runs;
    bytes += b.bytes;
  }
  return { runs, bytes };
}

/**
 * Earliest time >= now at which the window's `kind` total drops below `limit` as buckets expire (nothing new is
 * added meanwhile). A limit <= 0 can never be met; that is reported as one full window away.
 */
export function freeAt(buckets: Iterable<Bucket>, now: number, kind: LimitKind, limit: number): number {
  const live = [...buckets].filter((b) => isLive(b, now)).sort((a, b) => a.start - b.start);
  let total = live.reduce((sum, b) => sum + b[kind], 0);
  if (total < limit) return now;
  for (const b of live) {
    total -= b[kind];
    if (total < limit) return bucketExpiry(b.start);
  }
  return now + WINDOW_MS + BUCKET_MS;
}

/**
 * Whether one more run may start at `now`: refused when the runs already counted reached `budget.runs`, or the
 * bytes already billed reached `budget.bytes`. When both are exhausted the refusal names the one that frees
 * later, so `retryAt` is when a run is really let in again.
 */
export function checkRun(
  buckets: readonly Bucket[],
  budget: Budget,
  now: number,
  used: WindowUsage = usageAt(buckets, now),
): Refusal | null {
  const refusals: Refusal[] = [];
  if (used.runs >= budget.runs) {
    refusals.push({ limit: 'runs', limitValue: budget.runs, used: used.runs, retryAt: freeAt(buckets, now, 'runs', budget.runs) });
  }
  if (used.bytes >= budget.bytes) {
    refusals.push({ limit: 'bytes', limitValue: budget.bytes, used: used.bytes, retryAt: freeAt(buckets, now, 'bytes', budget.bytes) });
  }
  if (refusals.length === 0) return null;
  return refusals.reduce((a, b) => (b.retryAt > a.retryAt ? b : a));
}

/**
 * RateLimit-* values at `now`. `limit` and `remaining` count runs; an exhausted byte budget shows as
 * `remaining: 0`. `resetSeconds` is when `remaining` next goes up: when the next run is let in if none is left,
 * otherwise when the oldest counted run leaves the window.
 */
export function rateLimitState(
  buckets: readonly Bucket[],
  budget: Budget,
  now: number,
  used: WindowUsage = usageAt(buckets, now),
): RateLimitState {
  const limit = Math.max(0, budget.runs);
  const remaining = used.bytes >= budget.bytes ? 0 : Math.max(0, limit - used.runs);
  if (remaining === 0) {
    const refusal = checkRun(buckets, budget, now, used);
    return { limit, remaining, resetSeconds: refusal ? secondsUntil(refusal.retryAt, now) : 0 };
  }
  let oldest = Infinity;
  for (const b of buckets) if (b.runs > 0 && isLive(b, now) && b.start < oldest) oldest = b.start;
  return { limit, remaining, resetSeconds: oldest === Infinity ? 0 : secondsUntil(bucketExpiry(oldest), now) };
}
