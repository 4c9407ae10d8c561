import { z } from 'zod';
import { generateApiKey, invalidateAuthCache } from '../../auth/api-keys';
import type { AdminReach } from '../../auth/oauth-principal';
import type { PrincipalLimits } from '../../auth/principal';
import type { Env } from '../../env';
import { ApiError } from '../../errors';
import { grantMemoryWrite, MEMORIES_WRITE } from '../memories/permissions';

/**
 * API keys as an administrator manages them. An org administrator manages the org's key(s) and every key of its
 * brands; a brand administrator only that brand's keys. Every statement carries that condition, so an id from
 * another tenant is simply not found.
 */

export interface KeyScopeChoice {
  value: string;
  kind: 'org' | 'brand';
  id: string;
  label: string;
}

export interface ManagedKey {
  id: string;
  name: string;
  prefix: string;
  scope: { kind: 'org' | 'brand'; id: string; name: string | null };
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  limits: KeyLimits;
  /** Whether the key may write memories (`api_key_permissions`). */
  memoriesWrite: boolean;
}

function managedIds(reach: AdminReach): { orgs: string; brands: string } {
  return { orgs: JSON.stringify(reach.orgIds), brands: JSON.stringify(reach.brands.map((b) => b.id)) };
}

/** What a new key may be scoped to: each org the user administers as a whole, and each brand they reach. */
export async function keyScopeChoices(env: Env, reach: AdminReach): Promise<KeyScopeChoice[]> {
  const { results } = await env.DB.prepare('SELECT id, name FROM organizations WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id')
    .bind(JSON.stringify(reach.orgIds))
    .all<{ id: string; name: string }>();
  return [
    ...results.map((o) => ({ value: `org:${o.id}`, kind: 'org' as const, id: o.id, label: `${o.name}: all brands (organization key)` })),
    ...reach.brands.map((b) => ({ value: `brand:${b.id}`, kind: 'brand' as const, id: b.id, label: `${b.name ?? b.id} (brand key)` })),
  ];
}

const KeyRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  org_id: z.string().nullable(),
  brand_id: z.string().nullable(),
  scope_name: z.string().nullable(),
  max_bytes_billed: z.number().nullable(),
  daily_query_limit: z.number().nullable(),
  daily_bytes_limit: z.number().nullable(),
  created_at: z.number(),
  last_used_at: z.number().nullable(),
  revoked_at: z.number().nullable(),
  memories_write: z.number().int(),
});

function toManagedKey(row: z.infer<typeof KeyRowSchema>): ManagedKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scope: row.org_id ? { kind: 'org', id: row.org_id, name: row.scope_name } : { kind: 'brand', id: row.brand_id ?? '', name: row.scope_name },
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    limits: { dailyQueries: row.daily_query_limit, dailyBytes: row.daily_bytes_limit, maxBytesBilled: row.max_bytes_billed },
    memoriesWrite: row.memories_write === 1,
  };
}

const KEY_COLUMNS = `k.id, k.name, k.prefix, k.org_id, k.brand_id, COALESCE(o.name, b.name) AS scope_name,
  k.max_bytes_billed, k.daily_query_limit, k.daily_bytes_limit, k.created_at, k.last_used_at, k.revoked_at,
  EXISTS (SELECT 1 FROM api_key_permissions p WHERE p.key_id = k.id AND p.permission = '${MEMORIES_WRITE}') AS memories_write
  FROM api_keys k LEFT JOIN organizations o ON o.id = k.org_id LEFT JOIN brands b ON b.id = k.brand_id`;
const MANAGED = `(k.org_id IN (SELECT value FROM json_each(?1)) OR k.brand_id IN (SELECT value FROM json_each(?2)))`;

/** Keys the user manages: live ones first, newest first (revoked ones stay listed for the record). */
export async function listManagedKeys(env: Env, reach: AdminReach): Promise<ManagedKey[]> {
  const ids = managedIds(reach);
  const { results } = await env.DB.prepare(`SELECT ${KEY_COLUMNS} WHERE ${MANAGED} ORDER BY k.revoked_at IS NOT NULL, k.created_at DESC, k.id LIMIT 500`)
    .bind(ids.orgs, ids.brands)
    .all();
  return results.map((r) => toManagedKey(KeyRowSchema.parse(r)));
}

/** Limits of one key as stored in `api_keys` (bytes for byte limits); null = the Worker's default. */
export interface KeyLimits {
  dailyQueries: number | null;
  dailyBytes: number | null;
  maxBytesBilled: number | null;
}

/** What a new key is: its name, what it reaches and its own limits (the create form's parsed value). */
export interface NewKey {
  name: string;
  scope: { kind: 'org' | 'brand'; id: string };
  limits: KeyLimits;
  /** Grant `memories:write` (docs/memories.md); read-only for memories otherwise. */
  memoriesWrite?: boolean;
}

/** The limits that apply to a key: its own, else the Worker's defaults (as `authenticateApiKey` resolves them). */
export function effectiveLimits(own: KeyLimits, defaults: PrincipalLimits): PrincipalLimits {
  return {
    dailyQueries: own.dailyQueries ?? defaults.dailyQueries,
    dailyBytes: own.dailyBytes ?? defaults.dailyBytes,
    maxBytesBilled: own.maxBytesBilled ?? defaults.maxBytesBilled,
  };
}

/**
 * Creates a key for a scope the user manages. The secret is returned once and never stored (only its SHA-256, by
 * `generateApiKey`). Throws FORBIDDEN_BRAND for a scope outside the user's reach.
 */
export async function createManagedKey(
  env: Env,
  reach: AdminReach,
  form: NewKey,
  now: number,
): Promise<{ key: ManagedKey; secret: string }> {
  const { kind, id } = form.scope;
  const allowed = kind === 'org' ? reach.orgIds.includes(id) : reach.brands.some((b) => b.id === id);
  if (!allowed) throw new ApiError('FORBIDDEN_BRAND', `you do not administer ${kind} ${JSON.stringify(id)}`);
  const gen = await generateApiKey();
  await env.DB.prepare(
    `INSERT INTO api_keys (id, name, prefix, secret_hash, org_id, brand_id, max_bytes_billed, daily_query_limit,
                           daily_bytes_limit, created_by_user_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      gen.id,
      form.name,
      gen.prefix,
      gen.secretHash,
      kind === 'org' ? id : null,
      kind === 'brand' ? id : null,
      form.limits.maxBytesBilled,
      form.limits.dailyQueries,
      form.limits.dailyBytes,
      reach.userId,
      now,
    )
    .run();
  if (form.memoriesWrite) await grantMemoryWrite(env, gen.id, now);
  const row = await env.DB.prepare(`SELECT ${KEY_COLUMNS} WHERE k.id = ?`).bind(gen.id).first();
  return { key: toManagedKey(KeyRowSchema.parse(row)), secret: gen.secret };
}

/**
 * Revokes a live key the user manages; false when there is no such live key. Takes effect on this isolate's next
 * request and on every other isolate within AUTH_CACHE_TTL_MS.
 */
export async function revokeManagedKey(env: Env, reach: AdminReach, keyId: string, now: number): Promise<boolean> {
  const ids = managedIds(reach);
  const res = await env.DB.prepare(
    `UPDATE api_keys SET revoked_at = ?3 WHERE id = ?4 AND revoked_at IS NULL
       AND (org_id IN (SELECT value FROM json_each(?1)) OR brand_id IN (SELECT value FROM json_each(?2)))`,
  )
    .bind(ids.orgs, ids.brands, now, keyId)
    .run();
  invalidateAuthCache();
  return res.meta.changes === 1;
}

/**
 * Replaces the limits of a live key the user manages (null = back to the default); false when there is no such
 * live key. This isolate's next request runs under the new limits; other isolates within AUTH_CACHE_TTL_MS.
 */
export async function updateManagedKeyLimits(env: Env, reach: AdminReach, keyId: string, limits: KeyLimits): Promise<boolean> {
  const ids = managedIds(reach);
  const res = await env.DB.prepare(
    `UPDATE api_keys SET daily_query_limit = ?3, daily_bytes_limit = ?4, max_bytes_billed = ?5
      WHERE id = ?6 AND revoked_at IS NULL
        AND (org_id IN (SELECT value FROM json_each(?1)) OR brand_id IN (SELECT value FROM json_each(?2)))`,
  )
    .bind(ids.orgs, ids.brands, limits.dailyQueries, limits.dailyBytes, limits.maxBytesBilled, keyId)
    .run();
  invalidateAuthCache();
  return res.meta.changes === 1;
}
