import { KEY_SETTING_COLUMNS, KEY_SETTING_NAMES, KEY_SETTINGS, settingsOfRow, type KeySettings } from '../../auth/key-settings';

/**
 * The SQL of API keys, built once and run two ways: bound to D1 by the Worker (admin pages) and inlined as
 * literals by the admin CLI (`inlineStatement`, for `wrangler d1 execute`). So a key made or changed from either
 * side is the same row. Pure: builds statements, runs nothing.
 */

type Literal = string | number | null;

/** SQL with `?N` placeholders and their values (`params[N - 1]`). */
export interface Statement {
  sql: string;
  params: Literal[];
}

/** Which keys a statement may touch: every key (the CLI), or those of an administrator's orgs and brands. */
export type KeyReach = 'all' | { orgIds: string[]; brandIds: string[] };

/** A condition on `api_keys` (unaliased) for `reach`, with its parameters numbered from `from`. */
function reachCondition(reach: KeyReach, from: number): Statement {
  if (reach === 'all') return { sql: '1', params: [] };
  return {
    sql: `(org_id IN (SELECT value FROM json_each(?${from})) OR brand_id IN (SELECT value FROM json_each(?${from + 1})))`,
    params: [JSON.stringify(reach.orgIds), JSON.stringify(reach.brandIds)],
  };
}

/** A key as stored, without its secret hash. */
export interface StoredKey {
  id: string;
  name: string;
  prefix: string;
  orgId: string | null;
  brandId: string | null;
  /** The org's or brand's name. */
  scopeName: string | null;
  settings: KeySettings;
  memoriesWrite: boolean;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** The columns `keyOfRow` reads, from `api_keys k` joined to its org and brand (`KEY_FROM`). */
export const KEY_COLUMNS = `k.id, k.name, k.prefix, k.org_id, k.brand_id, COALESCE(o.name, b.name) AS scope_name, ${KEY_SETTING_COLUMNS},
  k.memories_write, k.created_at, k.last_used_at, k.revoked_at`;
export const KEY_FROM = 'api_keys k LEFT JOIN organizations o ON o.id = k.org_id LEFT JOIN brands b ON b.id = k.brand_id';

const str = (v: unknown): string => {
  if (typeof v !== 'string') throw new Error(`expected text in a key row, got ${JSON.stringify(v)}`);
  return v;
};
const strOrNull = (v: unknown): string | null => (v === null ? null : str(v));
const num = (v: unknown): number => {
  if (typeof v !== 'number') throw new Error(`expected a number in a key row, got ${JSON.stringify(v)}`);
  return v;
};
const numOrNull = (v: unknown): number | null => (v === null ? null : num(v));

/** A row of `SELECT KEY_COLUMNS FROM KEY_FROM`. */
export function keyOfRow(row: Record<string, unknown>): StoredKey {
  return {
    id: str(row.id),
    name: str(row.name),
    prefix: str(row.prefix),
    orgId: strOrNull(row.org_id),
    brandId: strOrNull(row.brand_id),
    scopeName: strOrNull(row.scope_name),
    settings: settingsOfRow(row),
    memoriesWrite: row.memories_write === 1,
    createdAt: num(row.created_at),
    lastUsedAt: numOrNull(row.last_used_at),
    revokedAt: numOrNull(row.revoked_at),
  };
}

export interface NewKeyRow {
  id: string;
  name: string;
  prefix: string;
  secretHash: string;
  orgId: string | null;
  brandId: string | null;
  settings: Partial<KeySettings>;
  memoriesWrite: boolean;
  createdByUserId: string | null;
  now: number;
}

/**
 * The key-name rule, stated once: a live key's name is unique within its organization (an organization key and the
 * keys of its brands share one namespace), compared without case and surrounding spaces. A revoked key's name is
 * free again. `?name`, `?org` and `?brand` are the placeholders of the new key's name, org id and brand id.
 */
function nameTakenCondition(name: string, org: string, brand: string): string {
  return `EXISTS (SELECT 1 FROM api_keys t LEFT JOIN brands tb ON tb.id = t.brand_id
     WHERE t.revoked_at IS NULL AND lower(trim(t.name)) = lower(trim(${name}))
       AND COALESCE(t.org_id, tb.org_id) = COALESCE(${org}, (SELECT org_id FROM brands WHERE id = ${brand})))`;
}

/**
 * Inserts a key (exactly one of orgId and brandId; the table's CHECK refuses anything else) and returns its id; no
 * row when a live key of the same organization already has this name (`nameTakenCondition`), checked in the same
 * statement, so two creates at once cannot both pass.
 */
export function insertKeyStatement(k: NewKeyRow): Statement {
  const columns = ['id', 'name', 'prefix', 'secret_hash', 'org_id', 'brand_id', 'memories_write', 'created_by_user_id', 'created_at'];
  const params: Literal[] = [k.id, k.name, k.prefix, k.secretHash, k.orgId, k.brandId, k.memoriesWrite ? 1 : 0, k.createdByUserId, k.now];
  for (const name of KEY_SETTING_NAMES) {
    columns.push(KEY_SETTINGS[name].column);
    params.push(k.settings[name] ?? null);
  }
  const values = params.map((_, i) => `?${i + 1}`).join(', ');
  return {
    sql: `INSERT INTO api_keys (${columns.join(', ')}) SELECT ${values} WHERE NOT ${nameTakenCondition('?2', '?5', '?6')} RETURNING id`,
    params,
  };
}

/** What a refused duplicate name says, on the console and in the admin CLI alike. */
export function keyNameTakenMessage(name: string): string {
  return `a live key named ${JSON.stringify(name.trim())} already exists in this organization; choose another name (names are unique per organization, ignoring case)`;
}

/**
 * Sets the given settings of one live key inside `reach` (null = back to the default) and returns its settings
 * as they now are (no row: no such live key). With no settings given, only reads them.
 */
export function updateKeySettingsStatement(keyId: string, settings: Partial<KeySettings>, reach: KeyReach): Statement {
  const names = KEY_SETTING_NAMES.filter((n) => settings[n] !== undefined);
  const params: Literal[] = [keyId, ...names.map((n) => settings[n] ?? null)];
  const where = reachCondition(reach, params.length + 1);
  const returning = KEY_SETTING_NAMES.map((n) => KEY_SETTINGS[n].column).join(', ');
  const condition = `id = ?1 AND revoked_at IS NULL AND ${where.sql}`;
  const sql =
    names.length === 0
      ? `SELECT ${returning} FROM api_keys WHERE ${condition}`
      : `UPDATE api_keys SET ${names.map((n, i) => `${KEY_SETTINGS[n].column} = ?${i + 2}`).join(', ')} ` +
        `WHERE ${condition} RETURNING ${returning}`;
  return { sql, params: [...params, ...where.params] };
}

/** Whether a key may write memories: one indexed read, made on every memory write. */
export function memoryWriteStatement(keyId: string): Statement {
  return { sql: 'SELECT memories_write FROM api_keys WHERE id = ?1 AND revoked_at IS NULL', params: [keyId] };
}
