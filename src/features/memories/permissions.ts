import type { Env } from '../../env';

/**
 * The memory write permission of API keys (`api_key_permissions`, permission `memories:write`). Granted when a key
 * is created (admin pages, admin CLI `key create --memories write`); read by every memory write
 * (src/features/memories/memories.ts), so withdrawing it applies to the next request.
 */
export const MEMORIES_WRITE = 'memories:write';

export async function grantMemoryWrite(env: Env, keyId: string, now: number): Promise<void> {
  await env.DB.prepare('INSERT OR IGNORE INTO api_key_permissions (key_id, permission, created_at) VALUES (?, ?, ?)').bind(keyId, MEMORIES_WRITE, now).run();
}

export async function hasMemoryWrite(env: Env, keyId: string): Promise<boolean> {
  return (await env.DB.prepare('SELECT 1 AS ok FROM api_key_permissions WHERE key_id = ? AND permission = ?').bind(keyId, MEMORIES_WRITE).first()) !== null;
}
