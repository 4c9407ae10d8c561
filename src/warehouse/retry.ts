/**
 * Pure retry policy for warehouse calls: exponential backoff with jitter, bounded both in attempts and in total
 * waiting, and never past the caller's deadline. No clock, no I/O: the client passes in what it knows.
 */

export interface RetryPolicy {
  /** Tries in all, the first included. Default 6. */
  maxAttempts: number;
  /** Backoff before the first retry, before jitter. Default 1,000 ms. */
  baseDelayMs: number;
  /** Largest single wait. Default 32,000 ms. */
  maxDelayMs: number;
  /** Largest sum of waits for one call. Default 60,000 ms. */
  maxTotalDelayMs: number;
}

/**
 * As Google's clients back off (Go bigquery.go `runWithRetryExplicit`: 1 s doubling to 32 s, "match the suggestions
 * in https://cloud.google.com/bigquery/sla"; python-bigquery DEFAULT_RETRY: 1 s initial): the caller's deadline,
 * not the attempt count, is what usually ends the retries.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 1000,
  maxDelayMs: 32_000,
  maxTotalDelayMs: 60_000,
};

export interface RetryState {
  /** Tries made so far (1 after the first failure). */
  attempt: number;
  /** Sum of the waits already made for this call. */
  waitedMs: number;
  /** Time left before the caller's deadline. */
  remainingMs: number;
  /** Upstream's `Retry-After`, in ms, when it sent one. */
  retryAfterMs?: number;
}

/**
 * "Equal jitter": half the exponential step fixed, half random, so waits grow with each try but concurrent
 * clients spread out. `random` returns [0, 1).
 */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/** How long to wait before the next try, or null to give up. */
export function nextRetryDelay(policy: RetryPolicy, state: RetryState, random: () => number): number | null {
  if (state.attempt >= policy.maxAttempts) return null;
  let delay = backoffDelay(policy, state.attempt, random);
  // Honour the server's hint when it asks for longer, within the per-wait cap.
  if (state.retryAfterMs !== undefined && state.retryAfterMs > delay) delay = Math.min(state.retryAfterMs, policy.maxDelayMs);
  if (state.waitedMs + delay > policy.maxTotalDelayMs) return null;
  // Waiting past the deadline only to be cut off is pointless; keep the failure we have.
  if (delay >= state.remainingMs) return null;
  return delay;
}

/** `Retry-After` as ms: delta-seconds only (BigQuery doesn't send HTTP dates); anything else is ignored. */
export function parseRetryAfter(header: string | null): number | undefined {
  if (!header || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header.trim()) * 1000;
}
