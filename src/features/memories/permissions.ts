import type { Env } from '../../env';
import { memoryWriteStatement } from '../keys/store';

/**
 * The memory write permission of API keys (`api_keys.memories_write`). Granted when a key is created (admin pages,
 * admin CLI `key create --memories write`); read by every memory write (src/features/memories/memories.ts), so
 * withdrawing it applies to the next request.
 */
export async function hasMemoryWrite(env: Env, keyId: string): Promise<boolean> {
  const s = memoryWriteStatement(keyId);
  const row = await env.DB.prepare(s.sql).bind(...s.params).first<{ memories_write: number }>();
  return row?.memories_write === 1;
}
