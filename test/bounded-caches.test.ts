import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../src/auth/principal';
import { catalogSnapshot } from '../src/catalog/snapshot';
import { configOf } from '../src/env';
import { memoryWriteOffered } from '../src/features/memories/permissions';
import { verdictCache } from '../src/features/query/verdict-cache';
import { approxBytes, TtlCache } from '../src/lib/ttl-cache';
import { recordGrantUse } from '../src/oauth/grant-activity';
import { seedDemo } from './seed';

beforeAll(async () => {
  await seedDemo();
});

describe('TtlCache: the one bounded per-isolate cache', () => {
  it('drops the least recently used entry past its entry bound; a read makes an entry recent', () => {
    const c = new TtlCache<number>(2);
    c.set('a', 1, 0);
    c.set('b', 2, 0);
    expect(c.get('a', 0)).toBe(1);
    c.set('c', 3, 0);
    expect([c.get('a', 0), c.get('b', 0), c.get('c', 0)]).toEqual([1, undefined, 3]);
    expect(c.size).toBe(2);
  });

  it('drops entries past its byte bound, counts keys and values, and never keeps an entry larger than the bound', () => {
    const c = new TtlCache<string>(1000, 2_000);
    for (let i = 0; i < 10; i++) c.set(`k${i}`, 'x'.repeat(200), 0);
    expect(c.bytes).toBeLessThanOrEqual(2_000);
    expect(c.size).toBeGreaterThan(1);
    expect(c.size).toBeLessThan(10);
    expect(c.get('k9', 0)).toBe('x'.repeat(200));
    expect(c.get('k0', 0)).toBeUndefined();
    c.set('huge', 'y'.repeat(5_000), 0);
    expect(c.get('huge', 0)).toBeUndefined();
    expect(c.get('k9', 0)).toBe('x'.repeat(200));
  });

  it('expires an entry at its TTL, and when the clock moves back', () => {
    const c = new TtlCache<number>(10);
    c.set('a', 1, 1_000);
    expect(c.get('a', 1_999, 1_000)).toBe(1);
    expect(c.get('a', 2_000, 1_000)).toBeUndefined();
    c.set('b', 2, 1_000);
    expect(c.get('b', 999, 1_000)).toBeUndefined();
    expect(c.size).toBe(0);
    expect(c.bytes).toBe(0);
  });

  it('bound() applies new bounds at once', () => {
    const c = new TtlCache<number>(10);
    for (let i = 0; i < 10; i++) c.set(`k${i}`, i, 0);
    c.bound({ maxEntries: 3 });
    expect(c.size).toBe(3);
    expect(c.get('k9', 0)).toBe(9);
    expect(c.get('k6', 0)).toBeUndefined();
  });

  it('load(): one load per key, a failure is not kept, a resolved value is measured by what it holds', async () => {
    const c = new TtlCache<Promise<string>>(10, 3_000);
    let loads = 0;
    const big = () => {
      loads++;
      return Promise.resolve('z'.repeat(1_000));
    };
    const [a, b] = [c.load('a', 0, Infinity, big), c.load('a', 0, Infinity, big)];
    expect(await a).toBe(await b);
    expect(loads).toBe(1);
    expect(c.bytes).toBeGreaterThan(2_000);
    // A second large value pushes the first out: the byte bound counts resolved values, not promises.
    await c.load('b', 0, Infinity, big);
    expect(c.size).toBe(1);
    await expect(c.load('bad', 0, Infinity, () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    await Promise.resolve();
    expect(c.get('bad', 0)).toBeUndefined();
  });

  it('approxBytes counts strings, nested objects and maps, and shared references once', () => {
    const s = 'a'.repeat(1_000);
    expect(approxBytes(s)).toBeGreaterThanOrEqual(2_000);
    const shared = { s };
    expect(approxBytes({ x: shared, y: [shared, shared] })).toBeLessThan(2 * approxBytes(shared));
    expect(approxBytes(new Map([['k', 'v'.repeat(500)]]))).toBeGreaterThan(1_000);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(approxBytes(cyclic)).toBeLessThan(200);
  });
});

describe('each per-isolate cache evicts at its bounds', () => {
  it('dry-run verdicts: VERDICT_CACHE_MAX_ENTRIES and CACHE_MAX_BYTES', () => {
    verdictCache.clear();
    const three = configOf({ ...env, VERDICT_CACHE_MAX_ENTRIES: '3' });
    for (let i = 0; i < 5; i++) verdictCache.set(three, `acme:${i}`, { estimate: i, tables: 1 }, 0);
    expect(verdictCache.size()).toBe(3);
    expect(verdictCache.get(three, 'acme:0', 1)).toBeUndefined();
    expect(verdictCache.get(three, 'acme:4', 1)).toEqual({ estimate: 4, tables: 1 });
    const fewBytes = configOf({ ...env, CACHE_MAX_BYTES: '1000' });
    for (let i = 0; i < 50; i++) verdictCache.set(fewBytes, `acme:${'f'.repeat(64)}${i}`, { estimate: i, tables: 1 }, 0);
    expect(verdictCache.size()).toBeLessThan(10);
    verdictCache.clear();
  });

  it('catalog snapshot: one larger than CACHE_MAX_BYTES is not kept (D1 is read again)', async () => {
    const ttl = { ...env, CATALOG_CACHE_TTL_MS: '60000' };
    const tiny = { ...ttl, CACHE_MAX_BYTES: '100' };
    const name = async (e: typeof env, now: number) => (await catalogSnapshot(e, now)).brands.get('brand_acme')?.name;
    const before = await name(ttl, 50_000);
    await env.DB.prepare("UPDATE brands SET name = 'Acme Renamed' WHERE id = 'brand_acme'").run();
    try {
      // Within the TTL the kept snapshot answers...
      expect(await name(ttl, 50_001)).toBe(before);
      // ...but under a byte bound smaller than the snapshot nothing is kept, so every read sees D1.
      expect(await name(tiny, 50_002)).toBe('Acme Renamed');
      await env.DB.prepare('UPDATE brands SET name = ? WHERE id = ?').bind(before, 'brand_acme').run();
      expect(await name(tiny, 50_003)).toBe(before);
    } finally {
      await env.DB.prepare('UPDATE brands SET name = ? WHERE id = ?').bind(before, 'brand_acme').run();
    }
  });

  it('memory write permission offered over MCP: AUTH_CACHE_MAX_ENTRIES', async () => {
    const small = { ...env, AUTH_CACHE_TTL_MS: '60000', AUTH_CACHE_MAX_ENTRIES: '1' };
    const key = (id: string) => ({ kind: 'key', id }) as Principal;
    const set = (id: string, on: 0 | 1) => env.DB.prepare('UPDATE api_keys SET memories_write = ? WHERE id = ?').bind(on, id).run();
    await set('key_demo_org', 1);
    try {
      expect(await memoryWriteOffered(small, key('key_demo_org'), 2_000)).toBe(true);
      await set('key_demo_org', 0);
      expect(await memoryWriteOffered(small, key('key_demo_org'), 2_001)).toBe(true);
      // One other key fills the single slot; the first is read again.
      await memoryWriteOffered(small, key('key_other_org'), 2_002);
      expect(await memoryWriteOffered(small, key('key_demo_org'), 2_003)).toBe(false);
    } finally {
      await set('key_demo_org', 0);
    }
  });

  it('OAuth grant use markers: at most 1000 grants tracked, least recently used out first', async () => {
    // The tracker decides whether a use is written; a counting KV stands in for the 1,002 marker writes (the
    // real KV write is covered by the OAuth tests), which would take the real binding seconds.
    const written: string[] = [];
    const counting = { ...env, OAUTH_KV: { put: async (key: string) => void written.push(key) } } as unknown as typeof env;
    const now = 3_000_000;
    await recordGrantUse(counting, 'grant-first', now);
    expect(recordGrantUse(counting, 'grant-first', now + 1)).toBeNull();
    await Promise.all(Array.from({ length: 1000 }, (_, i) => recordGrantUse(counting, `grant-${i}`, now + 2)));
    // Pushed out by the thousand others: its next use is written again (once a minute is the resolution anyway).
    await recordGrantUse(counting, 'grant-first', now + 3);
    expect(written.filter((k) => k === 'grant-last-used:grant-first')).toHaveLength(2);
    expect(written).toHaveLength(1002);
  });
});
