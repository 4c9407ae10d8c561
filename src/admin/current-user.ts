import type { Context } from 'hono';
import type { AppEnv } from '../app-env';
import { loadAdminReach, type AdminReach } from '../auth/oauth-principal';
import { signIn } from './login';
import { checkLoginCsrf, createSession, readSession, type Session } from './session';

/** The signed-in user of a request and what they administer (reach may be empty: not an administrator). */
export interface SignedIn {
  session: Session;
  reach: AdminReach;
}

/** The session's user, re-read from D1 on every request; null when signed out or the user no longer exists. */
export async function currentUser(c: Context<AppEnv>, now: number): Promise<SignedIn | null> {
  const session = await readSession(c, now);
  if (!session) return null;
  const reach = await loadAdminReach(c.env, session.userId);
  return reach ? { session, reach } : null;
}

/** String fields of a posted form (files and repeated fields ignored). */
export async function readForm(c: Context<AppEnv>): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
  return out;
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
  if (result.ok) return { ok: true, session: await createSession(c, result.userId, now) };
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
