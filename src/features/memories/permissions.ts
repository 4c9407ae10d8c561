import type { Principal } from '../../auth/principal';
import { nonNegativeIntVar, type Env } from '../../env';
import { TtlCache } from '../../lib/ttl-cache';

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

const offered = new TtlCache<Promise<boolean>>(1024);

/**
 * Whether MCP offers save_memory to this principal: API keys with the permission (re-read at most every
 * AUTH_CACHE_TTL_MS, like the key's other settings; every write still checks it at once), and OAuth connections,
 * which only administrators can make (the write checks that they still are).
 */
export function memoryWriteOffered(env: Env, principal: Principal, now: number): Promise<boolean> {
  if (principal.kind !== 'key') return Promise.resolve(true);
  const hit = offered.get(principal.id, now, nonNegativeIntVar(env, 'AUTH_CACHE_TTL_MS'));
  if (hit) return hit;
  const read = hasMemoryWrite(env, principal.id);
  read.catch(() => offered.delete(principal.id));
  offered.set(principal.id, read, now);
  return read;
}
