import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import type { AppEnv } from '../app-env';
import { randomBase64Url, sha256Hex } from '../lib/ids';

/**
 * Administrator sessions, shared by /admin and /authorize (the OAuth sign-in is the admin sign-in).
 *
 * The cookie holds a 256-bit random token; OAUTH_KV holds `admin-session:<sha256(token)>` -> { userId, createdAt,
 * expiresAt } with a KV expiry, so signing out deletes the session server-side and a stolen KV dump holds no usable
 * token. CSRF tokens (csrf.ts) and one-time flashes (flash.ts) are bound to the session token.
 */
export const SESSION_COOKIE = '__Host-wq-session';
/** A session lasts 8 hours from sign-in, then the administrator signs in again. */
export const SESSION_TTL_SECONDS = 8 * 3600;
/** Shape of the random tokens in our cookies (32 bytes, base64url). */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const SessionRecordSchema = z.object({ userId: z.string(), createdAt: z.number(), expiresAt: z.number() });

export interface Session {
  token: string;
  userId: string;
  expiresAt: number;
}

function sessionKey(tokenHash: string): string {
  return `admin-session:${tokenHash}`;
}

export const cookieOptions = (maxAge: number) =>
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
