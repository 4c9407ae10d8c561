import { z } from 'zod';
import { verifyPassword, PASSWORD_ITERATIONS } from '../auth/passwords';
import type { Env } from '../env';
import { sha256Hex } from '../lib/ids';

/** Consecutive failed sign-ins a user gets before the account is locked. */
export const FAILURES_BEFORE_LOCK = 5;
/** First lock lasts 15 minutes; each further failure after it doubles the lock, up to a day. */
export const FIRST_LOCK_MS = 15 * 60_000;
export const MAX_LOCK_MS = 24 * 3600_000;
/** Failed sign-ins accepted from one IP address per window, across all accounts (slows password spraying). */
export const IP_FAILURE_LIMIT = 30;
export const IP_WINDOW_MS = 15 * 60_000;

/**
 * Pure lock policy: after the `failures`-th consecutive failure, the time until which the account is locked, or
 * null when it is not locked yet.
 */
export function lockedUntilAfterFailure(failures: number, now: number): number | null {
  if (failures < FAILURES_BEFORE_LOCK) return null;
  const doublings = Math.min(failures - FAILURES_BEFORE_LOCK, 16);
  return now + Math.min(FIRST_LOCK_MS * 2 ** doublings, MAX_LOCK_MS);
}

/** Pure: the fixed window an attempt at `now` counts in. */
export function ipWindow(now: number): number {
  return Math.floor(now / IP_WINDOW_MS);
}

export type SignInResult =
  | { ok: true; userId: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked' | 'ip-throttled'; retryAfterSeconds: number };

const UserRow = z.object({
  id: z.string(),
  password_hash: z.string(),
  password_salt: z.string(),
  password_iterations: z.number(),
  failed_logins: z.number(),
  locked_until: z.number().nullable(),
});

// Verified against when the email is unknown, so an unknown address costs the same PBKDF2 time as a known one.
const DUMMY_HASH = { hash: '0'.repeat(64), salt: '0'.repeat(32), iterations: PASSWORD_ITERATIONS };

async function ipCounterKey(ip: string, now: number): Promise<string> {
  return `login-ip:${await sha256Hex(ip)}:${ipWindow(now)}`;
}

async function ipFailures(env: Env, ip: string, now: number): Promise<number> {
  const n = Number(await env.OAUTH_KV.get(await ipCounterKey(ip, now)));
  return Number.isSafeInteger(n) ? n : 0;
}

// KV has no atomic increment, so concurrent failures may undercount a little; the per-account lock in D1 is exact.
async function countIpFailure(env: Env, ip: string, now: number): Promise<void> {
  const key = await ipCounterKey(ip, now);
  const n = Number(await env.OAUTH_KV.get(key));
  await env.OAUTH_KV.put(key, String((Number.isSafeInteger(n) ? n : 0) + 1), {
    expirationTtl: Math.ceil(IP_WINDOW_MS / 1000) + 60,
  });
}

/**
 * Checks an administrator's email and password, with throttling: per account (failed_logins, locked_until in
 * D1; a locked account is refused without checking the password) and per IP address (KV counter per window).
 * A success resets the account's counter.
 */
export async function signIn(env: Env, input: { email: string; password: string; ip: string; now: number }): Promise<SignInResult> {
  const { email, password, ip, now } = input;
  if ((await ipFailures(env, ip, now)) >= IP_FAILURE_LIMIT) {
    return { ok: false, reason: 'ip-throttled', retryAfterSeconds: Math.ceil(((ipWindow(now) + 1) * IP_WINDOW_MS - now) / 1000) };
  }
  const raw = await env.DB.prepare(
    'SELECT id, password_hash, password_salt, password_iterations, failed_logins, locked_until FROM users WHERE email = ?',
  )
    .bind(email.trim())
    .first();
  if (raw === null) {
    await verifyPassword(password, DUMMY_HASH);
    await countIpFailure(env, ip, now);
    return { ok: false, reason: 'invalid' };
  }
  const user = UserRow.parse(raw);
  if (user.locked_until !== null && user.locked_until > now) {
    return { ok: false, reason: 'locked', retryAfterSeconds: Math.ceil((user.locked_until - now) / 1000) };
  }
  const valid = await verifyPassword(password, { hash: user.password_hash, salt: user.password_salt, iterations: user.password_iterations });
  if (valid) {
    if (user.failed_logins !== 0 || user.locked_until !== null) {
      await env.DB.prepare('UPDATE users SET failed_logins = 0, locked_until = NULL WHERE id = ?').bind(user.id).run();
    }
    return { ok: true, userId: user.id };
  }
  // Increment in SQL so concurrent failures all count.
  const counted = await env.DB.prepare('UPDATE users SET failed_logins = failed_logins + 1 WHERE id = ? RETURNING failed_logins')
    .bind(user.id)
    .first<{ failed_logins: number }>();
  const lockedUntil = lockedUntilAfterFailure(counted?.failed_logins ?? FAILURES_BEFORE_LOCK, now);
  await countIpFailure(env, ip, now);
  if (lockedUntil !== null) {
    await env.DB.prepare('UPDATE users SET locked_until = ? WHERE id = ?').bind(lockedUntil, user.id).run();
    return { ok: false, reason: 'locked', retryAfterSeconds: Math.ceil((lockedUntil - now) / 1000) };
  }
  return { ok: false, reason: 'invalid' };
}
