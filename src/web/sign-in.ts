import type { Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../app-env';
import { verifyPassword, PASSWORD_ITERATIONS } from '../auth/passwords';
import type { Env } from '../env';
import { sha256Hex } from '../lib/ids';
import { checkLoginCsrf, clearLoginNonce } from './csrf';
import { createSession, type Session } from './session';

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

/** Pure: the first millisecond of the fixed window an attempt at `now` counts in. */
export function ipWindowStart(now: number): number {
  return Math.floor(now / IP_WINDOW_MS) * IP_WINDOW_MS;
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

/** Rounds of the claim below before giving up; each round one concurrent attempt wins, so a handful suffice. */
const MAX_CLAIM_ROUNDS = 20;

type Claim = { ok: true; user: z.infer<typeof UserRow>; lockedUntil: number | null } | { ok: false; result: SignInResult };

/**
 * Counts this attempt as a failure before its password is checked, as a compare-and-swap on `failed_logins`: the
 * row changes only if nobody counted an attempt since we read it, and only while the account is not locked. The
 * attempt that reaches the limit also sets the lock in the same statement, so concurrent attempts cannot all slip
 * through between a read and a write: at most FAILURES_BEFORE_LOCK passwords are checked before the lock. A right
 * password then resets the counter.
 */
async function claimAttempt(env: Env, email: string, now: number): Promise<Claim | null> {
  for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
    const raw = await env.DB.prepare(
      'SELECT id, password_hash, password_salt, password_iterations, failed_logins, locked_until FROM users WHERE email = ?',
    )
      .bind(email)
      .first();
    if (raw === null) return null;
    const user = UserRow.parse(raw);
    if (user.locked_until !== null && user.locked_until > now) {
      return { ok: false, result: { ok: false, reason: 'locked', retryAfterSeconds: Math.ceil((user.locked_until - now) / 1000) } };
    }
    const lockedUntil = lockedUntilAfterFailure(user.failed_logins + 1, now);
    const claimed = await env.DB.prepare(
      `UPDATE users SET failed_logins = failed_logins + 1, locked_until = ?1
        WHERE id = ?2 AND failed_logins = ?3 AND (locked_until IS NULL OR locked_until <= ?4)`,
    )
      .bind(lockedUntil, user.id, user.failed_logins, now)
      .run();
    if (claimed.meta.changes === 1) return { ok: true, user, lockedUntil };
  }
  throw new Error(`sign-in attempt not counted after ${MAX_CLAIM_ROUNDS} rounds of contention`);
}

/**
 * Checks an administrator's email and password, with throttling per IP address (IP_FAILURE_LIMIT failures per
 * window across all accounts, see claimIpSlot) and per account (failed_logins, locked_until in D1; a locked account
 * is refused without checking the password, see claimAttempt). Both count an attempt before its password is
 * checked. A success resets the account's counter and gives the IP slot back; so does a refusal that checked nothing.
 */
export async function signIn(env: Env, input: { email: string; password: string; ip: string; now: number }): Promise<SignInResult> {
  const { email, password, ip, now } = input;
  const slot: IpSlot = { ipHash: await sha256Hex(ip), windowStart: ipWindowStart(now) };
  if (!(await claimIpSlot(env, slot))) {
    return { ok: false, reason: 'ip-throttled', retryAfterSeconds: Math.ceil((slot.windowStart + IP_WINDOW_MS - now) / 1000) };
  }
  const { result, checkedWrongPassword } = await checkPassword(env, email.trim(), password, now);
  if (!checkedWrongPassword) await releaseIpSlot(env, slot);
  return result;
}

/** The per-account part of signIn; says whether a wrong password was checked (what the per-IP slot counts). */
async function checkPassword(
  env: Env,
  email: string,
  password: string,
  now: number,
): Promise<{ result: SignInResult; checkedWrongPassword: boolean }> {
  const claim = await claimAttempt(env, email, now);
  if (claim === null) {
    await verifyPassword(password, DUMMY_HASH);
    return { result: { ok: false, reason: 'invalid' }, checkedWrongPassword: true };
  }
  if (!claim.ok) return { result: claim.result, checkedWrongPassword: false };
  const { user, lockedUntil } = claim;
  if (await verifyPassword(password, { hash: user.password_hash, salt: user.password_salt, iterations: user.password_iterations })) {
    await env.DB.prepare('UPDATE users SET failed_logins = 0, locked_until = NULL WHERE id = ?').bind(user.id).run();
    return { result: { ok: true, userId: user.id }, checkedWrongPassword: false };
  }
  if (lockedUntil !== null) return { result: { ok: false, reason: 'locked', retryAfterSeconds: Math.ceil((lockedUntil - now) / 1000) }, checkedWrongPassword: true };
  return { result: { ok: false, reason: 'invalid' }, checkedWrongPassword: true };
}

export type SignInOutcome =
  | { ok: true; session: Session }
  | { ok: false; status: 400 | 401 | 403 | 429; error: string; retryAfterSeconds?: number };

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
        ? `Too many failed sign-ins for this account. Try again in ${wait}.`
        : `Too many failed sign-ins from your network. Try again in ${wait}.`,
  };
}
