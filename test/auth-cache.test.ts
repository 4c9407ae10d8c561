import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { authenticateApiKey, invalidateAuthCache } from '../src/auth/api-keys';
import { ApiError } from '../src/errors';
import { seedDemo, TEST_KEYS } from './seed';

// The suite runs with AUTH_CACHE_TTL_MS=0; these cases turn the per-isolate cache on explicitly.
const cached = { ...env, AUTH_CACHE_TTL_MS: '1000' };

async function authCode(e: typeof env, secret: string, now: number): Promise<string> {
  try {
    await authenticateApiKey(e, secret, now);
    return 'OK';
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
}

beforeAll(async () => {
  await seedDemo();
});

describe('per-isolate API key cache (AUTH_CACHE_TTL_MS)', () => {
  it('reuses a live key within the TTL and reads D1 again after it', async () => {
    invalidateAuthCache();
    const t0 = 1_000_000;
    expect(await authCode(cached, TEST_KEYS.other, t0)).toBe('OK');
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE id = 'key_other_org'").run();
    // Within the TTL the isolate still holds the key; a TTL of 0 never does.
    expect(await authCode(cached, TEST_KEYS.other, t0 + 999)).toBe('OK');
    expect(await authCode(env, TEST_KEYS.other, t0 + 999)).toBe('UNAUTHORIZED');
    // At the TTL the revocation is seen.
    expect(await authCode(cached, TEST_KEYS.other, t0 + 1000)).toBe('UNAUTHORIZED');
    await env.DB.prepare("UPDATE api_keys SET revoked_at = NULL WHERE id = 'key_other_org'").run();
  });

  it('never caches unknown or revoked secrets, so a key created or restored works at once', async () => {
    invalidateAuthCache();
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE id = 'key_demo_brand'").run();
    expect(await authCode(cached, TEST_KEYS.brand, 5_000)).toBe('UNAUTHORIZED');
    await env.DB.prepare("UPDATE api_keys SET revoked_at = NULL WHERE id = 'key_demo_brand'").run();
    expect(await authCode(cached, TEST_KEYS.brand, 5_001)).toBe('OK');
  });

  it('invalidateAuthCache (admin revocations and limit changes) takes effect at once in this isolate', async () => {
    invalidateAuthCache();
    const p1 = await authenticateApiKey(cached, TEST_KEYS.org, 9_000);
    await env.DB.prepare("UPDATE api_keys SET daily_query_limit = 7 WHERE id = 'key_demo_org'").run();
    expect((await authenticateApiKey(cached, TEST_KEYS.org, 9_001)).limits.dailyQueries).toBe(p1.limits.dailyQueries);
    invalidateAuthCache();
    expect((await authenticateApiKey(cached, TEST_KEYS.org, 9_002)).limits.dailyQueries).toBe(7);
  });

  it('resolved API keys: AUTH_CACHE_MAX_ENTRIES, least recently used out first', async () => {
    invalidateAuthCache();
    const small = { ...env, AUTH_CACHE_TTL_MS: '60000', AUTH_CACHE_MAX_ENTRIES: '2' };
    try {
      expect(await authCode(small, TEST_KEYS.org, 1_000)).toBe('OK');
      expect(await authCode(small, TEST_KEYS.brand, 1_000)).toBe('OK');
      await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE id IN ('key_demo_org', 'key_demo_brand')").run();
      // Both are still held; reading the org key makes the brand key the least recently used.
      expect(await authCode(small, TEST_KEYS.org, 1_001)).toBe('OK');
      expect(await authCode(small, TEST_KEYS.other, 1_002)).toBe('OK');
      // The third key pushed the brand key out: D1 is read again and says revoked. The org key is still held.
      expect(await authCode(small, TEST_KEYS.brand, 1_003)).toBe('UNAUTHORIZED');
      expect(await authCode(small, TEST_KEYS.org, 1_003)).toBe('OK');
    } finally {
      await env.DB.prepare("UPDATE api_keys SET revoked_at = NULL WHERE id IN ('key_demo_org', 'key_demo_brand')").run();
      invalidateAuthCache();
    }
  });
});
