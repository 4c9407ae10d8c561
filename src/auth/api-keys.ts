import { z } from 'zod';
import { ApiError } from '../errors';
import { configOf, type Env } from '../env';
import { newId, randomBase64Url, sha256Hex } from '../lib/ids';
import { TtlCache } from '../lib/ttl-cache';
import { KEY_SETTING_COLUMNS, limitsOf, settingDefaults, settingsOfRow } from './key-settings';
import type { Principal, PrincipalLimits } from './principal';

/** Visible head of every secret; lets secret scanners and humans recognise our keys. */
export const KEY_PREFIX = 'wqk_';
/** Characters of the secret kept as the displayed prefix (prefix + 8 chars of the random part). */
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 8;
/** 32 random bytes = 256 bits of entropy. */
const SECRET_BYTES = 32;
/** last_used_at is written at most this often per key, so auth stays one read on the hot path. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface GeneratedKey {
  id: string;
  secret: string;
  prefix: string;
  secretHash: string;
}

/** Makes a new key. The secret is returned once and never stored; only its SHA-256 is. */
export async function generateApiKey(): Promise<GeneratedKey> {
  const secret = KEY_PREFIX + randomBase64Url(SECRET_BYTES);
  return { id: newId('key'), secret, prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH), secretHash: await sha256Hex(secret) };
}

const BrandIdsSchema = z.array(z.string());

/** A key as the Worker reads it to authenticate (its settings are the `KEY_SETTING_COLUMNS`, read with it). */
const KeyRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  org_id: z.string().nullable(),
  eff_org_id: z.string().nullable(),
  brand_ids: z.string(),
  last_used_at: z.number().nullable(),
  revoked_at: z.number().nullable(),
});

/** The limits of a key or user that sets none of its own: every setting at the Worker's default. */
export function defaultLimits(env: Env): PrincipalLimits {
  return settingDefaults(configOf(env));
}

/**
 * Live keys already resolved by this isolate, by secret hash. Auth is a D1 round trip otherwise, which the
 * benchmark shows dominates a catalog request; `AUTH_CACHE_TTL_MS` bounds how long a revocation or limit
 * change made elsewhere can take to reach this isolate (0 = read D1 on every request). Only live keys are
 * cached, so a new key works at once; unknown and revoked secrets always go to D1. Bounded by
 * AUTH_CACHE_MAX_ENTRIES and CACHE_MAX_BYTES (least recently used dropped first).
 */
const principalCache = new TtlCache<Principal>(10_000);

/** Forgets every cached key in this isolate (admin revocations and limit changes call it). */
export function invalidateAuthCache(): void {
  principalCache.clear();
}

const UNAUTHORIZED_MESSAGE = 'missing, invalid or revoked API key; send Authorization: Bearer <API key>';

/**
 * Resolves an API key secret to a principal in one D1 read (the key, its org, its brands and every setting, resolved
 * into `limits`).
 * Throws 401 UNAUTHORIZED for anything but a live key. `waitUntil` receives the throttled last-used write.
 */
export async function authenticateApiKey(
  env: Env,
  secret: string | null,
  now: number,
  waitUntil?: (p: Promise<unknown>) => void,
): Promise<Principal> {
  if (!secret || !secret.startsWith(KEY_PREFIX) || secret.length > 200) {
    throw new ApiError('UNAUTHORIZED', UNAUTHORIZED_MESSAGE);
  }
  const hash = await sha256Hex(secret);
  const config = configOf(env);
  const ttl = config.AUTH_CACHE_TTL_MS;
  principalCache.bound({ maxEntries: config.AUTH_CACHE_MAX_ENTRIES, maxBytes: config.CACHE_MAX_BYTES });
  if (ttl > 0) {
    const cached = principalCache.get(hash, now, ttl);
    if (cached) return cached;
  }
  // The one read of the key per request (or per AUTH_CACHE_TTL_MS): who it is, what it reaches and every setting.
  const found = await env.DB.prepare(
    `SELECT k.id, k.name, k.org_id, k.last_used_at, k.revoked_at, ${KEY_SETTING_COLUMNS},
            COALESCE(k.org_id, (SELECT b.org_id FROM brands b WHERE b.id = k.brand_id)) AS eff_org_id,
            (SELECT json_group_array(b.id) FROM (SELECT id FROM brands b
               WHERE (k.org_id IS NOT NULL AND b.org_id = k.org_id) OR b.id = k.brand_id ORDER BY id) b) AS brand_ids
       FROM api_keys k WHERE k.secret_hash = ?`,
  )
    .bind(hash)
    .first<Record<string, unknown>>();
  if (!found) throw new ApiError('UNAUTHORIZED', UNAUTHORIZED_MESSAGE);
  const row = KeyRowSchema.parse(found);
  if (row.revoked_at !== null) throw new ApiError('UNAUTHORIZED', UNAUTHORIZED_MESSAGE);

  if (waitUntil && (row.last_used_at === null || now - row.last_used_at > LAST_USED_RESOLUTION_MS)) {
    waitUntil(
      env.DB.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
        .bind(now, row.id)
        .run()
        .catch(() => undefined),
    );
  }
  const brandIds = BrandIdsSchema.parse(JSON.parse(row.brand_ids));
  const principal: Principal = {
    kind: 'key',
    id: row.id,
    label: row.name,
    orgId: row.eff_org_id,
    scope: row.org_id ? 'org' : 'brand',
    brandIds,
    limits: limitsOf(settingsOfRow(found), settingDefaults(config)),
  };
  if (ttl > 0) principalCache.set(hash, principal, now);
  return principal;
}
