import type { Principal, PrincipalLimits } from '../auth/principal';
import { usageKey } from '../auth/principal';
import { configOf, type Env } from '../env';
import { ApiError } from '../errors';
import type { MeterKind } from './meter';
import type { AcquireOutcome, UsageLimiter, UsagePeek } from './usage-limiter';
import { secondsUntil, WINDOW_MS, type Budget, type RateLimitState, type Refusal, type WindowUsage } from './window';
import { settingDefaults, type KeySettingName } from '../auth/key-settings';

/** A counted run (`id` set) or a budget check only (`id` null), with the RateLimit-* headers for the response. */
export interface UsageTicket {
  id: string | null;
  headers: Record<string, string>;
  /** What is left of the rolling budget after this call (bytes: with this run's reservation taken). */
  budget: BudgetLeft;
  /** Bytes reserved for this run at admission (0 for checks and meters); `settleRun` replaces them with the bytes billed. */
  reservedBytes: number;
}

/** The principal's rolling 24 h budget as a result reports it (MCP puts it in the body, REST in headers). */
export interface BudgetLeft {
  runsLimit: number;
  runsRemaining: number;
  bytesLimit: number;
  bytesRemaining: number;
  /** Seconds until `runsRemaining` next goes up (RateLimit-Reset). */
  resetSeconds: number;
  /** The per-query byte-scan ceiling (`maximumBytesBilled`). */
  maxBytesBilled: number;
  /** Long queries allowed running at once (`Jobs-Limit`). */
  maxRunningJobs: number;
  /** The longest a long query may run, ms (`Job-Timeout`, in seconds). */
  jobTimeoutMs: number;
}

/** The principal's window as the admin UI shows it. */
export interface UsageSnapshot {
  /** Length of the rolling window, ms. */
  windowMs: number;
  runs: { used: number; limit: number; remaining: number };
  bytes: { used: number; limit: number; remaining: number };
  /** When a refused run would be let in again (ISO); null when a run is allowed now. */
  blockedUntil: string | null;
  /** Which limit blocks runs now, if any. */
  blockedBy: 'runs' | 'bytes' | null;
}

/**
 * How long a call to the usage object may take before the run fails closed (503). Generous: the object answers
 * in well under a millisecond when healthy; this only bounds a stuck or overloaded one.
 */
export const USAGE_TIMEOUT_MS = 5000;

const UNAVAILABLE_MESSAGE = 'the usage limiter is unavailable, so the query was not run; retry shortly';

/**
 * Checks the principal's rolling 24 h budget at `now`. With `consume: true` (a real run, called after the SQL guard
 * and the dry run passed, right before execution) the run is counted, `opts.reserveBytes` (the most it can bill,
 * default 0) is added to the window's bytes at once, and `id` is the ticket to settle; with `consume: false` (dry
 * runs) nothing is counted and `id` is null. Either way a run is refused when the runs or the bytes (billed and
 * reserved) in the window reached the principal's limit.
 *
 * `opts.timeoutMs` (default USAGE_TIMEOUT_MS) bounds the wait for the object.
 *
 * @throws ApiError USAGE_LIMIT_EXCEEDED (429, headers Retry-After and RateLimit-*; details
 *   `{ limit, limitValue, used, resetAt }`), or USAGE_UNAVAILABLE (503) when the object is unreachable or fails:
 *   a run is never let through unmetered.
 */
export async function acquireRun(
  env: Env,
  principal: Principal,
  now: number,
  opts: { consume: boolean; reserveBytes?: number; timeoutMs?: number },
): Promise<UsageTicket> {
  const reserveBytes = opts.consume ? Math.max(0, Math.ceil(opts.reserveBytes ?? 0)) : 0;
  if (!Number.isSafeInteger(reserveBytes)) throw new RangeError(`reserveBytes must be a finite number, got ${opts.reserveBytes}`);
  const outcome: AcquireOutcome = await callLimiter(
    env,
    usageKey(principal),
    (stub) => stub.acquire(budgetOf(principal.limits), now, opts.consume, reserveBytes),
    opts.timeoutMs,
  );
  const headers = { ...rateLimitHeaders(outcome.rate), ...jobLimitHeaders(principal.limits) };
  if (outcome.refusal) throw limitExceeded(outcome.refusal, now, headers);
  return {
    id: outcome.ticketId,
    headers,
    budget: budgetLeft(principal.limits, outcome.rate, outcome.used),
    reservedBytes: outcome.ticketId === null ? 0 : reserveBytes,
  };
}

function budgetLeft(limits: PrincipalLimits, rate: RateLimitState, used: WindowUsage): BudgetLeft {
  return {
    runsLimit: limits.dailyQueries,
    runsRemaining: rate.remaining,
    bytesLimit: limits.dailyBytes,
    bytesRemaining: Math.max(0, limits.dailyBytes - used.bytes),
    resetSeconds: rate.resetSeconds,
    maxBytesBilled: limits.maxBytesBilled,
    maxRunningJobs: limits.maxRunningJobs,
    jobTimeoutMs: limits.jobTimeoutMs,
  };
}

/** The key's two long-query limits as headers, beside the RateLimit-* ones on every run and page response. */
function jobLimitHeaders(limits: PrincipalLimits): Record<string, string> {
  return { 'Jobs-Limit': String(limits.maxRunningJobs), 'Job-Timeout': String(Math.floor(limits.jobTimeoutMs / 1000)) };
}

/** The key setting that sets each meter's per-minute rate. */
const METER_SETTING = { checks: 'checksPerMinute', pages: 'pageReadsPerMinute' } as const satisfies Record<MeterKind, KeySettingName>;

/**
 * The principal's per-minute rate for `kind`: its limits say it (the key's own setting or the default, resolved
 * when the key was read; no second read). OAuth connections use the default.
 */
export function meterRate(env: Env, principal: Principal, kind: MeterKind): number {
  const setting = METER_SETTING[kind];
  return principal.kind === 'key' ? principal.limits[setting] : settingDefaults(configOf(env))[setting];
}

/**
 * Takes one token from the principal's `kind` meter: `checks` for dry runs and requests the SQL guard refuses,
 * `pages` for cursor page reads. Neither spends the 24-hour run budget.
 *
 * @throws ApiError USAGE_LIMIT_EXCEEDED (429, `Retry-After`, `details.limit` = the meter) past the rate, or
 *   USAGE_UNAVAILABLE (503) when the object is unreachable (fail closed, as for runs).
 */
export async function takeMeter(env: Env, principal: Principal, kind: MeterKind, now: number): Promise<UsageTicket> {
  const perMinute = meterRate(env, principal, kind);
  const out = await callLimiter(env, usageKey(principal), (stub) => stub.meter(kind, perMinute, budgetOf(principal.limits), now));
  const headers = { ...rateLimitHeaders(out.rate), ...jobLimitHeaders(principal.limits) };
  if (out.allowed) return { id: null, headers, budget: budgetLeft(principal.limits, out.rate, out.used), reservedBytes: 0 };
  const what = kind === 'checks' ? 'dry runs and refused queries' : 'result page reads';
  throw new ApiError(
    'USAGE_LIMIT_EXCEEDED',
    `rate limit reached: at most ${perMinute} ${what} per minute for this key; retry in ${out.retryAfterSeconds} s`,
    {
      details: { limit: kind, limitValue: perMinute, perSeconds: 60, retryAfterSeconds: out.retryAfterSeconds },
      headers: { ...headers, 'Retry-After': String(out.retryAfterSeconds) },
    },
  );
}

/**
 * Replaces a counted run's reservation with the bytes it billed (call it whether the run succeeded or failed in
 * the warehouse; a failed run stays counted once and usually bills 0 bytes). A ticket settles once; repeating it is
 * a no-op, as is settling a dry-run ticket (`id` null). Retries once, which is safe because settling is idempotent.
 * Until it settles, the run's reservation stays counted.
 *
 * @throws ApiError USAGE_UNAVAILABLE when the object stays unreachable. The query has already run and billed by
 *   then, so callers should run this in `waitUntil` and log a failure rather than fail the response.
 */
export async function settleRun(
  env: Env,
  principal: Pick<Principal, 'kind' | 'id'>,
  ticket: Pick<UsageTicket, 'id'>,
  usage: { bytesBilled: number },
): Promise<void> {
  const ticketId = ticket.id;
  if (ticketId === null) return;
  const bytes = Math.max(0, Math.round(usage.bytesBilled));
  if (!Number.isSafeInteger(bytes)) throw new RangeError(`bytesBilled must be a finite number, got ${usage.bytesBilled}`);
  const key = usageKey(principal);
  try {
    await callLimiter(env, key, (stub) => stub.settle(ticketId, bytes));
  } catch {
    await callLimiter(env, key, (stub) => stub.settle(ticketId, bytes));
  }
}

/**
 * The current window of the principal whose usage key is `principalKey` (`usageKey(principal)`, e.g.
 * `key:key_0123`), measured against `limits`, without counting anything. For the admin UI.
 *
 * @throws ApiError USAGE_UNAVAILABLE when the object is unreachable.
 */
export async function peekUsage(env: Env, principalKey: string, limits: PrincipalLimits, now: number): Promise<UsageSnapshot> {
  const budget = budgetOf(limits);
  const peek: UsagePeek = await callLimiter(env, principalKey, (stub) => stub.peek(budget, now));
  return {
    windowMs: WINDOW_MS,
    runs: { used: peek.used.runs, limit: budget.runs, remaining: Math.max(0, budget.runs - peek.used.runs) },
    bytes: { used: peek.used.bytes, limit: budget.bytes, remaining: Math.max(0, budget.bytes - peek.used.bytes) },
    blockedUntil: peek.refusal ? new Date(peek.refusal.retryAt).toISOString() : null,
    blockedBy: peek.refusal?.limit ?? null,
  };
}

/** RateLimit-Limit / -Remaining / -Reset (IETF httpapi-ratelimit-headers draft, delta seconds). */
export function rateLimitHeaders(rate: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Limit': String(rate.limit),
    'RateLimit-Remaining': String(rate.remaining),
    'RateLimit-Reset': String(rate.resetSeconds),
  };
}

function budgetOf(limits: PrincipalLimits): Budget {
  return { runs: limits.dailyQueries, bytes: limits.dailyBytes };
}

function limitExceeded(refusal: Refusal, now: number, headers: Record<string, string>): ApiError {
  // Retry-After is at least 1: a 0 would invite an immediate retry into the same refusal.
  const retryAfter = Math.max(1, secondsUntil(refusal.retryAt, now));
  const resetAt = new Date(refusal.retryAt).toISOString();
  const what = refusal.limit === 'runs' ? 'query runs' : 'bytes billed';
  return new ApiError(
    'USAGE_LIMIT_EXCEEDED',
    `daily usage limit reached: ${refusal.used} ${what} in the last 24 hours (limit ${refusal.limitValue}); ` +
      `the next run is allowed at ${resetAt}`,
    {
      details: { limit: refusal.limit, limitValue: refusal.limitValue, used: refusal.used, resetAt },
      headers: { ...headers, 'Retry-After': String(retryAfter) },
    },
  );
}

/** One call to the principal's object; any failure (missing binding, RPC error, exception, timeout) is a 503. */
async function callLimiter<T>(
  env: Env,
  key: string,
  call: (stub: DurableObjectStub<UsageLimiter>) => Promise<T>,
  timeoutMs = USAGE_TIMEOUT_MS,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const stub = env.USAGE.getByName(key);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`usage object did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    return await Promise.race([call(stub), timeout]);
  } catch (err) {
    throw new ApiError('USAGE_UNAVAILABLE', UNAVAILABLE_MESSAGE, { internal: err });
  } finally {
    clearTimeout(timer);
  }
}
