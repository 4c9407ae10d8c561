import type { z } from 'zod';
import { ApiError } from '../errors';

/**
 * Opaque pagination cursors: `<payload>.<mac>`, both base64url. The payload holds the last position returned
 * and when the cursor was issued; the HMAC-SHA256 covers the payload AND the binding (who asked, with which
 * filters), which is not in the token. So a cursor cannot be forged or edited, and replaying it with another
 * key or other filters fails verification. Page size is deliberately not bound: the position is a keyset
 * position in a total order, so a client may change `limit` between pages without skipping or repeating rows.
 *
 * Pure apart from WebCrypto: the caller passes the secret and `now`.
 */

/** Cursors older than this are refused, so a leaked one stops working (a walk takes seconds, not days). */
export const CURSOR_TTL_MS = 24 * 60 * 60 * 1000;
/** Clock skew tolerated between Worker instances for the issue time. */
const FUTURE_SKEW_MS = 5 * 60 * 1000;
/** Longest token accepted before any decoding work. */
export const MAX_CURSOR_LENGTH = 1024;
const VERSION = 1;

export interface CursorBinding {
  /** Stable id of the caller, e.g. `key:<api key id>`. */
  principal: string;
  /** Every filter the listing was made with; null for an absent filter. */
  filters: Record<string, string | null>;
}

function b64urlEncode(bytes: Uint8Array): string {
  let s = '';
  for (const x of bytes) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function b64urlDecode(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  let bytes: Uint8Array;
  try {
    const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
    bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
  // Canonical encodings only: the last character's unused low bits are ignored by atob, so without this check
  // several spellings of one token would verify (a flipped last character could still be accepted).
  return b64urlEncode(bytes) === text ? bytes : null;
}

/** What the MAC covers: the binding in a canonical order, then the payload exactly as sent. */
function macInput(binding: CursorBinding, payload: string): Uint8Array {
  const filters = Object.keys(binding.filters)
    .sort()
    .map((k) => [k, binding.filters[k] ?? null]);
  return new TextEncoder().encode(`cursor.v${VERSION}\n${JSON.stringify([binding.principal, filters])}\n${payload}`);
}

async function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/** Issues a cursor for `position` (any JSON value) under `binding`. */
export async function signCursor(secret: string, binding: CursorBinding, position: unknown, now: number): Promise<string> {
  const payload = b64urlEncode(new TextEncoder().encode(JSON.stringify({ v: VERSION, iat: now, pos: position })));
  const mac = await crypto.subtle.sign('HMAC', await hmacKey(secret), macInput(binding, payload));
  return `${payload}.${b64urlEncode(new Uint8Array(mac))}`;
}

/**
 * One page of a keyset listing read with one row more than `limit`: the first `limit` rows, and when there was one
 * more, a cursor for the next page at the last returned row's `position`.
 */
export async function keysetPage<R>(
  rows: readonly R[],
  limit: number,
  position: (last: R) => unknown,
  cursor: { secret: string; binding: CursorBinding; now: number },
): Promise<{ page: R[]; nextCursor: string | null }> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > limit && last !== undefined ? await signCursor(cursor.secret, cursor.binding, position(last), cursor.now) : null;
  return { page, nextCursor };
}

function invalidCursor(reason: string): ApiError {
  return new ApiError(
    'VALIDATION',
    `invalid query parameter cursor: ${reason}; ` +
      'pass back nextCursor unchanged with the same filters and key, or omit cursor to start again',
    { details: { in: 'query', issues: [{ path: 'cursor', message: reason }] } },
  );
}

/**
 * Verifies a cursor issued by `signCursor` for the same binding and returns its position, parsed with
 * `positionSchema`. Any failure (malformed, bad MAC, other key or filters, expired) is 400 VALIDATION naming
 * `cursor`; the reasons a forger could learn from are not told apart.
 */
export async function openCursor<T>(
  secret: string,
  token: string,
  binding: CursorBinding,
  now: number,
  positionSchema: z.ZodType<T>,
): Promise<T> {
  const rejected = invalidCursor('not a cursor issued for this key and these filters');
  if (token.length > MAX_CURSOR_LENGTH) throw rejected;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) throw rejected;
  const payload = token.slice(0, dot);
  const mac = b64urlDecode(token.slice(dot + 1));
  if (!mac) throw rejected;
  // Constant-time comparison is WebCrypto's job here.
  const ok = await crypto.subtle.verify('HMAC', await hmacKey(secret), mac, macInput(binding, payload));
  if (!ok) throw rejected;

  const raw = b64urlDecode(payload);
  let decoded: unknown;
  try {
    decoded = raw ? JSON.parse(new TextDecoder().decode(raw)) : null;
  } catch {
    throw rejected;
  }
  if (typeof decoded !== 'object' || decoded === null || !('v' in decoded) || !('iat' in decoded) || !('pos' in decoded)) {
    throw rejected;
  }
  const { v, iat, pos } = decoded;
  if (v !== VERSION || typeof iat !== 'number') throw rejected;
  if (iat > now + FUTURE_SKEW_MS || now - iat > CURSOR_TTL_MS) throw invalidCursor('cursor has expired');
  const parsed = positionSchema.safeParse(pos);
  if (!parsed.success) throw rejected;
  return parsed.data;
}
