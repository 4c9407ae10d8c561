import type { Env } from '../env';

/**
 * The memory write permission of API keys (`api_key_permissions`, permission `memories:write`). Granted when a key
 * is created (admin pages, admin CLI `key create --memories write`); read by every memory write
 * (src/operations/memories.ts), so withdrawing it applies to the next request.
 */
export const MEMORIES_WRITE = 'memories:write';

export async function grantMemoryWrite(env: Env, keyId: string, now: number): Promise<void> {
  await env.DB.prepare('INSERT OR IGNORE INTO api_key_permissions (key_id, permission, created_at) VALUES (?, ?, ?)').bind(keyId, MEMORIES_WRITE, now).run();
}

export async function hasMemoryWrite(env: Env, keyId: string): Promise<boolean> {
  return (await env.DB.prepare('SELECT 1 AS ok FROM api_key_permissions WHERE key_id = ? AND permission = ?').bind(keyId, MEMORIES_WRITE).first()) !== null;
}

/** Key ids among `keyIds` that may write memories (for listing keys). */
export async function memoryWriters(env: Env, keyIds: readonly string[]): Promise<Set<string>> {
  const { results } = await env.DB.prepare('SELECT key_id FROM api_key_permissions WHERE permission = ? AND key_id IN (SELECT value FROM json_each(?))')
    .bind(MEMORIES_WRITE, JSON.stringify(keyIds))
    .all<{ key_id: string }>();
  return new Set(results.map((r) => r.key_id));
}
