import type { Principal } from '../../auth/principal';
import { configOf, type Env } from '../../env';
import { TtlCache } from '../../lib/ttl-cache';
import { memoryWriteStatement } from '../keys/store';

/**
 * The memory write permission of API keys (`api_keys.memories_write`). Granted when a key is created (admin pages,
 * admin CLI `key create --memories write`); read by every memory write (src/features/memories/memories.ts), so
 * withdrawing it applies to the next request.
 */
export async function hasMemoryWrite(env: Env, keyId: string): Promise<boolean> {
  const s = memoryWriteStatement(keyId);
  const row = await env.DB.prepare(s.sql)
    .bind(...s.params)
    .first<{ memories_write: number }>();
  return row?.memories_write === 1;
}

const offered = new TtlCache<Promise<boolean>>(1024);

/**
 * Whether MCP offers save_memory to this principal: API keys with the permission (re-read at most every
 * AUTH_CACHE_TTL_MS, like the key's other settings; every write still checks it at once), and OAuth connections
 * whose administrator allowed memories when approving them (the write checks that they are still an administrator).
 */
export function memoryWriteOffered(env: Env, principal: Principal, now: number): Promise<boolean> {
  if (principal.kind !== 'key') return Promise.resolve(principal.writes?.memories === true);
  const config = configOf(env);
  return offered
    .bound({ maxEntries: config.AUTH_CACHE_MAX_ENTRIES, maxBytes: config.CACHE_MAX_BYTES })
    .load(principal.id, now, config.AUTH_CACHE_TTL_MS, () => hasMemoryWrite(env, principal.id));
}
