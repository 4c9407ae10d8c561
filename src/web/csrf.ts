import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { AppEnv } from '../app-env';
import { requireSecret } from '../env';
import { randomBase64Url } from '../lib/ids';
import { constantTimeEqual, hmacHex } from './secrets';
import { cookieOptions, TOKEN_PATTERN, type Session } from './session';

/**
 * CSRF tokens: HMAC-SHA256(SESSION_SECRET, purpose + token), bound to the session (or, before sign-in, to a
 * short-lived random nonce cookie), checked on every POST, never stored.
 */

/** Nonce cookie that binds the sign-in form's CSRF token before a session exists (login CSRF). */
export const LOGIN_COOKIE = '__Host-wq-login';
const LOGIN_NONCE_TTL_SECONDS = 3600;

/** The CSRF token for forms of a signed-in administrator. */
export function sessionCsrfToken(c: Context<AppEnv>, session: Session): Promise<string> {
  return hmacHex(requireSecret(c.env, 'SESSION_SECRET'), `csrf:session:${session.token}`);
}

/** True when the posted token belongs to this session. */
export async function checkSessionCsrf(c: Context<AppEnv>, session: Session, posted: string | undefined): Promise<boolean> {
  return typeof posted === 'string' && constantTimeEqual(posted, await sessionCsrfToken(c, session));
}

/**
 * The CSRF token for a sign-in form, bound to a nonce cookie (reused while it lives, so two open tabs both work).
 * Without it an attacker's page could sign a victim into the attacker's account.
 */
export async function loginCsrfToken(c: Context<AppEnv>): Promise<string> {
  let nonce = getCookie(c, LOGIN_COOKIE);
  if (!nonce || !TOKEN_PATTERN.test(nonce)) {
    nonce = randomBase64Url(32);
    setCookie(c, LOGIN_COOKIE, nonce, cookieOptions(LOGIN_NONCE_TTL_SECONDS));
  }
  return hmacHex(requireSecret(c.env, 'SESSION_SECRET'), `csrf:login:${nonce}`);
}

/** True when the posted sign-in token matches this browser's nonce cookie. */
export async function checkLoginCsrf(c: Context<AppEnv>, posted: string | undefined): Promise<boolean> {
  const nonce = getCookie(c, LOGIN_COOKIE);
  if (!nonce || !TOKEN_PATTERN.test(nonce) || typeof posted !== 'string') return false;
  return constantTimeEqual(posted, await hmacHex(requireSecret(c.env, 'SESSION_SECRET'), `csrf:login:${nonce}`));
}

/** Drops the sign-in nonce once a session exists. */
export function clearLoginNonce(c: Context<AppEnv>): void {
  deleteCookie(c, LOGIN_COOKIE, { path: '/', secure: true });
}
