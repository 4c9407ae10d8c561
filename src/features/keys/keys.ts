import { generateApiKey, invalidateAuthCache } from '../../auth/api-keys';
import type { AdminReach } from '../../auth/oauth-principal';
import type { Env } from '../../env';
import { ApiError } from '../../errors';
import type { KeySettings } from '../../auth/key-settings';
import {
  insertKeyStatement,
  KEY_COLUMNS,
  KEY_FROM,
  keyNameTakenMessage,
  keyOfRow,
  updateKeySettingsStatement,
  type KeyReach,
  type Statement,
  type StoredKey,
} from './store';

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
  /** The key's own settings (src/auth/key-settings.ts); null = the Worker's default. */
  limits: KeySettings;
  /** Whether the key may write memories. */
  memoriesWrite: boolean;
}

function keyReach(reach: AdminReach): { orgIds: string[]; brandIds: string[] } {
  return { orgIds: reach.orgIds, brandIds: reach.brands.map((b) => b.id) };
}

/** Runs a store statement against D1. */
function prepare(env: Env, s: Statement): D1PreparedStatement {
  return env.DB.prepare(s.sql).bind(...s.params);
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

function toManagedKey(k: StoredKey): ManagedKey {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scope: k.orgId ? { kind: 'org', id: k.orgId, name: k.scopeName } : { kind: 'brand', id: k.brandId ?? '', name: k.scopeName },
    createdAt: k.createdAt,
    lastUsedAt: k.lastUsedAt,
    revokedAt: k.revokedAt,
    limits: k.settings,
    memoriesWrite: k.memoriesWrite,
  };
}

const MANAGED = `(k.org_id IN (SELECT value FROM json_each(?1)) OR k.brand_id IN (SELECT value FROM json_each(?2)))`;

/** Keys the user manages: live ones first, newest first (revoked ones stay listed for the record). */
export async function listManagedKeys(env: Env, reach: AdminReach): Promise<ManagedKey[]> {
  const { orgIds, brandIds } = keyReach(reach);
  const { results } = await env.DB.prepare(
    `SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE ${MANAGED} ORDER BY k.revoked_at IS NOT NULL, k.created_at DESC, k.id LIMIT 500`,
  )
    .bind(JSON.stringify(orgIds), JSON.stringify(brandIds))
    .all();
  return results.map((r) => toManagedKey(keyOfRow(r)));
}

/** What a new key is: its name, what it reaches and its own limits (the create form's parsed value). */
export interface NewKey {
  name: string;
  scope: { kind: 'org' | 'brand'; id: string };
  limits: KeySettings;
  /** Grant `memories:write` (docs/memories.md); read-only for memories otherwise. */
  memoriesWrite?: boolean;
}

/**
 * Creates a key for a scope the user manages. The secret is returned once and never stored (only its SHA-256, by
 * `generateApiKey`). Throws FORBIDDEN_BRAND for a scope outside the user's reach, VALIDATION (field `name`) for a name a
 * live key of the same organization already has.
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
  const inserted = await prepare(
    env,
    insertKeyStatement({
      id: gen.id,
      name: form.name,
      prefix: gen.prefix,
      secretHash: gen.secretHash,
      orgId: kind === 'org' ? id : null,
      brandId: kind === 'brand' ? id : null,
      settings: form.limits,
      memoriesWrite: form.memoriesWrite === true,
      createdByUserId: reach.userId,
      now,
    }),
  ).first();
  if (inserted === null) throw new ApiError('VALIDATION', keyNameTakenMessage(form.name), { details: { field: 'name' } });
  const row = await env.DB.prepare(`SELECT ${KEY_COLUMNS} FROM ${KEY_FROM} WHERE k.id = ?`).bind(gen.id).first();
  if (!row) throw new Error(`key ${gen.id} was not found right after its insert`);
  return { key: toManagedKey(keyOfRow(row)), secret: gen.secret };
}

/**
 * Revokes a live key the user manages; false when there is no such live key. Takes effect on this isolate's next
 * request and on every other isolate within AUTH_CACHE_TTL_MS.
 */
export async function revokeManagedKey(env: Env, reach: AdminReach, keyId: string, now: number): Promise<boolean> {
  const { orgIds, brandIds } = keyReach(reach);
  const res = await env.DB.prepare(
    `UPDATE api_keys SET revoked_at = ?3 WHERE id = ?4 AND revoked_at IS NULL
       AND (org_id IN (SELECT value FROM json_each(?1)) OR brand_id IN (SELECT value FROM json_each(?2)))`,
  )
    .bind(JSON.stringify(orgIds), JSON.stringify(brandIds), now, keyId)
    .run();
  invalidateAuthCache();
  return res.meta.changes === 1;
}

/**
 * Replaces the limits of a live key the user manages (null = back to the default); false when there is no such
 * live key. This isolate's next request runs under the new limits; other isolates within AUTH_CACHE_TTL_MS.
 */
export async function updateManagedKeyLimits(env: Env, reach: AdminReach, keyId: string, limits: KeySettings): Promise<boolean> {
  const row = await prepare(env, updateKeySettingsStatement(keyId, limits, keyReach(reach))).first();
  invalidateAuthCache();
  return row !== null;
}
