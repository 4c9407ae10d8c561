/**
 * Pure token bucket for the light meters: dry runs and guard refusals ("checks"), and cursor page reads
 * ("pages"). Neither runs a query, so neither spends the 24-hour run budget, but each is a warehouse call or a
 * parse on the service's account: a bucket of `perMinute` tokens, refilled continuously at `perMinute` a minute,
 * allows a burst of that many and then that rate. `now` is always an argument.
 */

export type MeterKind = 'checks' | 'pages';

export interface MeterState {
  /** Tokens left at `updated` (fractional while refilling). */
  tokens: number;
  /** ms since epoch. */
  updated: number;
}

export interface MeterOutcome {
  allowed: boolean;
  state: MeterState;
  /** Whole tokens left after this call. */
  remaining: number;
  /** Whole seconds until the next token, at least 1, when refused; 0 when allowed. */
  retryAfterSeconds: number;
}

const MINUTE_MS = 60_000;

/** Takes one token at `now` from `prev` (a full bucket when absent). */
export function takeToken(prev: MeterState | undefined, perMinute: number, now: number): MeterOutcome {
  if (!Number.isSafeInteger(perMinute) || perMinute <= 0) throw new RangeError(`perMinute must be a positive integer, got ${perMinute}`);
  const elapsed = prev ? Math.max(0, now - prev.updated) : 0;
  const refilled = prev ? Math.min(perMinute, prev.tokens + (elapsed * perMinute) / MINUTE_MS) : perMinute;
  if (refilled >= 1) {
    const state = { tokens: refilled - 1, updated: now };
    return { allowed: true, state, remaining: Math.floor(state.tokens), retryAfterSeconds: 0 };
  }
  const msToToken = ((1 - refilled) * MINUTE_MS) / perMinute;
  return {
    allowed: false,
    state: { tokens: refilled, updated: now },
    remaining: 0,
    retryAfterSeconds: Math.max(1, Math.ceil(msToToken / 1000)),
  };
}
