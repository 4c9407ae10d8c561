import type { Context } from 'hono';
import type { z } from 'zod';
import type { AppEnv } from '../app-env';
import { requireSecret } from '../env';
import { sha256Hex } from '../lib/ids';
import { hmac } from './secrets';
import type { Session } from './session';

/**
 * One-time messages for POST/redirect/GET: a POST stores what the next page must show once (e.g. a new key's
 * secret), redirects with 303, and the GET takes it: reads and deletes it, so a reload shows nothing new.
 *
 * Stored in OAUTH_KV under `admin-flash:<sha256(session token)>:<kind>` for FLASH_TTL_SECONDS, AES-GCM encrypted
 * under HMAC(SESSION_SECRET, "flash:" + session token): only the session that stored a flash can read it, and a KV
 * dump alone reveals nothing. KV has no atomic take, so two GETs racing within milliseconds could both see it; a
 * reload, which comes after the first page arrived, cannot.
 */
const FLASH_TTL_SECONDS = 120;

export type FlashKind = 'key-created' | 'webhook-secret' | 'webhook-test';

async function flashKey(session: Session, kind: FlashKind): Promise<string> {
  return `admin-flash:${await sha256Hex(session.token)}:${kind}`;
}

async function cipherKey(c: Context<AppEnv>, session: Session): Promise<CryptoKey> {
  const raw = await hmac(requireSecret(c.env, 'SESSION_SECRET'), `flash:${session.token}`);
  return crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}

/** Stores `value` for the next page of this session (replacing an earlier flash of the same kind). */
export async function putFlash(c: Context<AppEnv>, session: Session, kind: FlashKind, value: unknown): Promise<void> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await cipherKey(c, session), new TextEncoder().encode(JSON.stringify(value))),
  );
  const stored = new Uint8Array(iv.length + sealed.length);
  stored.set(iv);
  stored.set(sealed, iv.length);
  await c.env.OAUTH_KV.put(await flashKey(session, kind), stored, { expirationTtl: FLASH_TTL_SECONDS });
}

/** The flash of this kind, deleted as it is read; null when there is none (already shown, expired, or forged). */
export async function takeFlash<S extends z.ZodType>(
  c: Context<AppEnv>,
  session: Session,
  kind: FlashKind,
  schema: S,
): Promise<z.infer<S> | null> {
  const key = await flashKey(session, kind);
  const stored = await c.env.OAUTH_KV.get(key, 'arrayBuffer');
  if (stored === null) return null;
  await c.env.OAUTH_KV.delete(key);
  const bytes = new Uint8Array(stored);
  let plain: ArrayBuffer;
  try {
    plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: bytes.slice(0, 12) }, await cipherKey(c, session), bytes.slice(12));
  } catch {
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(plain));
  } catch {
    return null;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : null;
}
