import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import type { AppEnv } from '../app-env';
import { requireSecret } from '../env';
import { randomBase64Url, sha256Hex } from '../lib/ids';

/**
 * Administrator sessions, shared by /admin and /authorize (the OAuth sign-in is the admin sign-in).
 *
 * The cookie holds a 256-bit random token; OAUTH_KV holds `admin-session:<sha256(token)>` -> { userId, createdAt,
 * expiresAt } with a KV expiry, so signing out deletes the session server-side and a stolen KV dump holds no usable
 * token. CSRF tokens are HMAC-SHA256(SESSION_SECRET, purpose + token): bound to the session (or, before sign-in, to a
 * short-lived random nonce cookie), checked on every POST, never stored.
 */
export const SESSION_COOKIE = '__Host-wq-session';
/** Nonce cookie that binds the sign-in form's CSRF token before a session exists (login CSRF). */
export const LOGIN_COOKIE = '__Host-wq-login';
/** A session lasts 8 hours from sign-in, then the administrator signs in again. */
export const SESSION_TTL_SECONDS = 8 * 3600;
const LOGIN_NONCE_TTL_SECONDS = 3600;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const SessionRecordSchema = z.object({ userId: z.string(), createdAt: z.number(), expiresAt: z.number() });

export interface Session {
  token: string;
  userId: string;
  expiresAt: number;
}

function sessionKey(tokenHash: string): string {
  return `admin-session:${tokenHash}`;
}

const cookieOptions = (maxAge: number) =>
  // SameSite=Lax, not Strict: an assistant sends the browser to /authorize from another site, and a signed-in
  // administrator should land on the consent screen rather than a second sign-in. Every POST checks a CSRF token.
  ({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/', maxAge }) as const;

/** Starts a session for a user who just signed in; sets the cookie on the response being built. */
export async function createSession(c: Context<AppEnv>, userId: string, now: number): Promise<Session> {
  const token = randomBase64Url(32);
  const expiresAt = now + SESSION_TTL_SECONDS * 1000;
  await c.env.OAUTH_KV.put(sessionKey(await sha256Hex(token)), JSON.stringify({ userId, createdAt: now, expiresAt }), {
    expirationTtl: SESSION_TTL_SECONDS,
  });
  setCookie(c, SESSION_COOKIE, token, cookieOptions(SESSION_TTL_SECONDS));
  deleteCookie(c, LOGIN_COOKIE, { path: '/', secure: true });
  return { token, userId, expiresAt };
}

/** The live session of this request, or null (no cookie, unknown, or expired). */
export async function readSession(c: Context<AppEnv>, now: number): Promise<Session | null> {
  const token = getCookie(c, SESSION_COOKIE);
  if (!token || !TOKEN_PATTERN.test(token)) return null;
  const raw = await c.env.OAUTH_KV.get(sessionKey(await sha256Hex(token)), 'json');
  const record = SessionRecordSchema.safeParse(raw);
  if (!record.success || record.data.expiresAt <= now) return null;
  return { token, userId: record.data.userId, expiresAt: record.data.expiresAt };
}

/** Signs out: the server-side record goes first, then the cookie. */
export async function destroySession(c: Context<AppEnv>, session: Session | null): Promise<void> {
  if (session) await c.env.OAUTH_KV.delete(sessionKey(await sha256Hex(session.token)));
  deleteCookie(c, SESSION_COOKIE, { path: '/', secure: true });
}

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(message));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

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
