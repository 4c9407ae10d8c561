import type { Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../app-env';
import { verifyPassword, PASSWORD_ITERATIONS } from '../auth/passwords';
import type { Env } from '../env';
import { requestSource } from '../http/source';
import { sha256Hex } from '../lib/ids';
import { checkLoginCsrf, clearLoginNonce } from './csrf';
import { createSession, type Session } from './session';

/** Consecutive failed sign-ins from one source a user gets before that source is locked out of the account. */
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

/** Pure: the first millisecond of the fixed window an attempt at `now` counts in. */
export function ipWindowStart(now: number): number {
  return Math.floor(now / IP_WINDOW_MS) * IP_WINDOW_MS;
}

export type SignInResult =
  | { ok: true; userId: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked' | 'ip-throttled'; retryAfterSeconds: number };

// Verified against when the email is unknown, so an unknown address costs the same PBKDF2 time as a known one.
const DUMMY_HASH = { hash: '0'.repeat(64), salt: '0'.repeat(32), iterations: PASSWORD_ITERATIONS };

/** One address's slot in one window of the per-IP throttle (a row of login_ip_failures). */
interface IpSlot {
  ipHash: string;
  windowStart: number;
}

/**
 * Takes one of the IP_FAILURE_LIMIT slots of this address's window before any password is checked, in one upsert
 * that adds the row or raises its count only while it is under the limit. SQLite runs the statement atomically, so
 * however many attempts arrive at once, at most IP_FAILURE_LIMIT of them get a slot and the rest find none (the
 * per-account lock below is the same kind of compare-and-count in D1). The same batch deletes past windows' rows.
 * False: the window is full.
 */
async function claimIpSlot(env: Env, slot: IpSlot): Promise<boolean> {
  const [, claimed] = await env.DB.batch([
    env.DB.prepare('DELETE FROM login_ip_failures WHERE window_start < ?').bind(slot.windowStart),
    env.DB.prepare(
      `INSERT INTO login_ip_failures (ip_hash, window_start, failures) VALUES (?1, ?2, 1)
       ON CONFLICT (ip_hash, window_start) DO UPDATE SET failures = failures + 1 WHERE failures < ?3
       RETURNING failures`,
    ).bind(slot.ipHash, slot.windowStart, IP_FAILURE_LIMIT),
  ]);
  return claimed !== undefined && claimed.results.length === 1;
}

/** Gives a slot back: the attempt turned out not to be a failed password check. */
async function releaseIpSlot(env: Env, slot: IpSlot): Promise<void> {
  await env.DB.prepare('UPDATE login_ip_failures SET failures = failures - 1 WHERE ip_hash = ? AND window_start = ? AND failures > 0')
    .bind(slot.ipHash, slot.windowStart)
    .run();
}

const UserRow = z.object({ id: z.string(), password_hash: z.string(), password_salt: z.string(), password_iterations: z.number() });

/** One account's failures from one source, as claimAttempt counted them. */
type Claim = { ok: true; lockedUntil: number | null } | { ok: false; result: SignInResult };

/** Rows of login_account_failures idle this long are deleted (the longest lock is a day). */
const ACCOUNT_ROW_IDLE_MS = MAX_LOCK_MS;

/**
 * Counts this attempt as a failure of this account from this source before its password is checked, in one upsert
 * that adds the row or raises its count only while that source is not locked out of the account; the attempt that
 * reaches FAILURES_BEFORE_LOCK also sets the lock (lockedUntilAfterFailure, in SQL) in the same statement. SQLite
 * runs it atomically, so however many attempts arrive at once from one source, at most FAILURES_BEFORE_LOCK passwords
 * are checked before the lock. A lock binds only its source: the real administrator, elsewhere, still signs in.
 */
async function claimAttempt(env: Env, userId: string, sourceHash: string, now: number): Promise<Claim> {
  const [, claimed] = await env.DB.batch([
    env.DB.prepare('DELETE FROM login_account_failures WHERE updated_at < ? AND (locked_until IS NULL OR locked_until < ?)').bind(
      now - ACCOUNT_ROW_IDLE_MS,
      now,
    ),
    env.DB.prepare(
      `INSERT INTO login_account_failures (user_id, source_hash, failures, locked_until, updated_at)
       VALUES (?1, ?2, 1, iif(1 >= ?4, ?3 + ?5, NULL), ?3)
       ON CONFLICT (user_id, source_hash) DO UPDATE SET
         failures = failures + 1,
         locked_until = iif(failures + 1 >= ?4, ?3 + min(?5 * (1 << min(failures + 1 - ?4, 16)), ?6), NULL),
         updated_at = ?3
       WHERE locked_until IS NULL OR locked_until <= ?3
       RETURNING locked_until`,
    ).bind(userId, sourceHash, now, FAILURES_BEFORE_LOCK, FIRST_LOCK_MS, MAX_LOCK_MS),
  ]);
  const row = claimed?.results[0] as { locked_until: number | null } | undefined;
  if (row !== undefined) return { ok: true, lockedUntil: row.locked_until };
  const lock = await env.DB.prepare('SELECT locked_until FROM login_account_failures WHERE user_id = ? AND source_hash = ?')
    .bind(userId, sourceHash)
    .first<number | null>('locked_until');
  const retryAfterSeconds = Math.max(1, Math.ceil(((lock ?? now) - now) / 1000));
  return { ok: false, result: { ok: false, reason: 'locked', retryAfterSeconds } };
}

/**
 * Checks an administrator's email and password, with throttling per source (IP_FAILURE_LIMIT failures per window
 * across all accounts, see claimIpSlot) and per account and source (login_account_failures; a source locked out of
 * an account is refused without checking the password, see claimAttempt). Both count an attempt before its
 * password is checked. A success resets the account's count for that source and gives the slot back; so does a
 * refusal that checked nothing. `ip` is CF-Connecting-IP; IPv6 addresses count by their /64 (requestSource).
 */
export async function signIn(env: Env, input: { email: string; password: string; ip: string; now: number }): Promise<SignInResult> {
  const { email, password, ip, now } = input;
  const sourceHash = await sha256Hex(requestSource(ip));
  const slot: IpSlot = { ipHash: sourceHash, windowStart: ipWindowStart(now) };
  if (!(await claimIpSlot(env, slot))) {
    return { ok: false, reason: 'ip-throttled', retryAfterSeconds: Math.ceil((slot.windowStart + IP_WINDOW_MS - now) / 1000) };
  }
  const { result, checkedWrongPassword } = await checkPassword(env, email.trim(), password, sourceHash, now);
  if (!checkedWrongPassword) await releaseIpSlot(env, slot);
  return result;
}

/** The per-account part of signIn; says whether a wrong password was checked (what the per-source slot counts). */
async function checkPassword(
  env: Env,
  email: string,
  password: string,
  sourceHash: string,
  now: number,
): Promise<{ result: SignInResult; checkedWrongPassword: boolean }> {
  const raw = await env.DB.prepare('SELECT id, password_hash, password_salt, password_iterations FROM users WHERE email = ?')
    .bind(email)
    .first();
  if (raw === null) {
    await verifyPassword(password, DUMMY_HASH);
    return { result: { ok: false, reason: 'invalid' }, checkedWrongPassword: true };
  }
  const user = UserRow.parse(raw);
  const claim = await claimAttempt(env, user.id, sourceHash, now);
  if (!claim.ok) return { result: claim.result, checkedWrongPassword: false };
  if (await verifyPassword(password, { hash: user.password_hash, salt: user.password_salt, iterations: user.password_iterations })) {
    await env.DB.prepare('DELETE FROM login_account_failures WHERE user_id = ? AND source_hash = ?').bind(user.id, sourceHash).run();
    return { result: { ok: true, userId: user.id }, checkedWrongPassword: false };
  }
  const { lockedUntil } = claim;
  if (lockedUntil !== null)
    return {
      result: { ok: false, reason: 'locked', retryAfterSeconds: Math.ceil((lockedUntil - now) / 1000) },
      checkedWrongPassword: true,
    };
  return { result: { ok: false, reason: 'invalid' }, checkedWrongPassword: true };
}

export type SignInOutcome =
  { ok: true; session: Session } | { ok: false; status: 400 | 401 | 403 | 429; error: string; retryAfterSeconds?: number };

function minutes(seconds: number): string {
  const m = Math.max(1, Math.ceil(seconds / 60));
  return m === 1 ? '1 minute' : `${m} minutes`;
}

/**
 * The sign-in POST shared by /admin/login and /authorize: login CSRF check, throttled password check, session.
 * Failure messages never say whether the email exists.
 */
export async function handleSignIn(c: Context<AppEnv>, form: Record<string, string>, now: number): Promise<SignInOutcome> {
  if (!(await checkLoginCsrf(c, form.csrf))) {
    return { ok: false, status: 403, error: 'This sign-in form expired. Please try again.' };
  }
  const email = (form.email ?? '').trim();
  const password = form.password ?? '';
  if (email === '' || password === '' || email.length > 320 || password.length > 1024) {
    return { ok: false, status: 400, error: 'Enter your email and password.' };
  }
  const ip = c.req.header('cf-connecting-ip') ?? 'unknown';
  const result = await signIn(c.env, { email, password, ip, now });
  if (result.ok) {
    const session = await createSession(c, result.userId, now);
    clearLoginNonce(c);
    return { ok: true, session };
  }
  if (result.reason === 'invalid') return { ok: false, status: 401, error: 'Wrong email or password.' };
  const wait = minutes(result.retryAfterSeconds);
  return {
    ok: false,
    status: 429,
    retryAfterSeconds: result.retryAfterSeconds,
    error:
      result.reason === 'locked'
        ? `Too many failed sign-ins for this account from your network. Try again in ${wait}.`
        : `Too many failed sign-ins from your network. Try again in ${wait}.`,
  };
}
