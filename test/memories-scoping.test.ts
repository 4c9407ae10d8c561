import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryListSchema, MemorySchema } from '../src/features/memories/memories.schemas';
import { appliesTo, BRANDS, KEY_BRANDS, KEY_ORG, KEYS, reachingBrands, type Owned } from './demo-model';
import { api, expectError, postJson, seedDemo, type TestKey } from './seed';

/**
 * The scoping matrix for memories: every operation, with the org key (org_demo), the brand key (brand_acme) and the
 * other org's key (org_other), against a memory of every owner. Expectations come from the model in demo-model.ts,
 * written apart from the code: reading follows the reports' rule, writing the writer's own scope.
 */
const KEY_IDS: Record<TestKey, string> = { org: 'key_demo_org', brand: 'key_demo_brand', other: 'key_other_org' };
type Owner = Owned & { name: string };
const OWNERS: Owner[] = [
  { name: 'system', scope: 'system' },
  { name: 'org_demo', scope: 'org', org: 'org_demo' },
  { name: 'org_other', scope: 'org', org: 'org_other' },
  ...BRANDS.map((brand) => ({ name: brand, scope: 'brand' as const, brand })),
];

const visible = (key: TestKey, o: Owner) => reachingBrands(key, o).length > 0;
const writable = (key: TestKey, o: Owner) =>
  o.scope === 'org' ? KEY_ORG[key] === o.org : o.scope === 'brand' && KEY_BRANDS[key].includes(o.brand);

/** One memory per owner for the listings (never changed), and one per (key, owner) for that key's writes. */
const listId = (o: Owner) => `mem_mx_list_${o.name}`;
const writeId = (key: TestKey, o: Owner) => `mem_mx_${key}_${o.name}`;

async function insert(id: string, o: Owner, title: string) {
  await env.DB.prepare(
    `INSERT INTO memories (id, scope, org_id, brand_id, table_name, title, content, author_kind, author_name, updated_by_kind, updated_by_name, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'fact__orders', ?, 'matrix', 'cli', 'test', 'cli', 'test', 1, 1)`,
  )
    .bind(id, o.scope, o.scope === 'org' ? o.org : null, o.scope === 'brand' ? o.brand : null, title)
    .run();
}

beforeAll(async () => {
  await seedDemo();
  for (const o of OWNERS) {
    await insert(listId(o), o, 'matrix-list');
    for (const key of KEYS) await insert(writeId(key, o), o, 'matrix-write');
  }
  for (const id of Object.values(KEY_IDS)) {
    await env.DB.prepare('UPDATE api_keys SET memories_write = 1 WHERE id = ?').bind(id).run();
  }
});

const listed = async (key: TestKey, query: string) => {
  const res = await api(`/v1/data/memories?q=matrix-list&limit=200${query}`, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return MemoryListSchema.parse(res.body)
    .memories.map((m) => m.memoryId)
    .sort();
};

describe.each(KEYS)('memories, %s key', (key) => {
  it.each(BRANDS)('listMemories?brandId=%s', async (brand) => {
    if (!KEY_BRANDS[key].includes(brand))
      return void expectError(await api(`/v1/data/memories?brandId=${brand}`, key), 403, 'FORBIDDEN_BRAND');
    expect(await listed(key, `&brandId=${brand}`)).toEqual(
      OWNERS.filter((o) => appliesTo(o, brand))
        .map(listId)
        .sort(),
    );
  });

  it("listMemories without brandId: exactly what reaches the key's brands, each once", async () => {
    expect(await listed(key, '')).toEqual(
      OWNERS.filter((o) => visible(key, o))
        .map(listId)
        .sort(),
    );
  });

  it.each(OWNERS.map((o) => [o.name, o] as const))('getMemory of a %s memory', async (_, o) => {
    const res = await api(`/v1/data/memories/${listId(o)}`, key);
    if (!visible(key, o)) return void expectError(res, 404, 'MEMORY_NOT_FOUND');
    expect(res.status).toBe(200);
    expect(MemorySchema.parse(res.body).memoryId).toBe(listId(o));
  });

  it.each(OWNERS.map((o) => [o.name, o] as const))('updateMemory then deleteMemory of a %s memory', async (_, o) => {
    const id = writeId(key, o);
    const patch = await api(`/v1/data/memories/${id}`, key, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: `edited by ${key}` }),
    });
    const del = await api(`/v1/data/memories/${id}`, key, { method: 'DELETE' });
    const row = await env.DB.prepare('SELECT title, deleted_at FROM memories WHERE id = ?').bind(id).first();
    if (!visible(key, o)) {
      expectError(patch, 404, 'MEMORY_NOT_FOUND');
      expectError(del, 404, 'MEMORY_NOT_FOUND');
      expect(row).toEqual({ title: 'matrix-write', deleted_at: null });
    } else if (!writable(key, o)) {
      expectError(patch, 403, 'MEMORY_WRITE_FORBIDDEN');
      expectError(del, 403, 'MEMORY_WRITE_FORBIDDEN');
      expect(row).toEqual({ title: 'matrix-write', deleted_at: null });
    } else {
      expect(MemorySchema.parse(patch.body).title).toBe(`edited by ${key}`);
      expect(del.body).toMatchObject({ memoryId: id, deleted: true });
      expect(row).toMatchObject({ title: `edited by ${key}`, deleted_at: expect.any(Number) });
    }
  });

  it.each(BRANDS)('createMemory for brandId=%s', async (brand) => {
    const res = await postJson('/v1/data/memories', key, { brandId: brand, title: 'matrix-create', content: 'c' });
    if (!KEY_BRANDS[key].includes(brand)) return void expectError(res, 403, 'FORBIDDEN_BRAND');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(MemorySchema.parse(res.body)).toMatchObject({ scope: 'brand', brandId: brand });
  });

  it('createMemory of an org memory', async () => {
    const res = await postJson('/v1/data/memories', key, { scope: 'org', title: 'matrix-create', content: 'c' });
    if (KEY_ORG[key] === null) return void expectError(res, 403, 'MEMORY_WRITE_FORBIDDEN');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const m = MemorySchema.parse(res.body);
    const row = await env.DB.prepare('SELECT org_id FROM memories WHERE id = ?').bind(m.memoryId).first('org_id');
    expect(row).toBe(KEY_ORG[key]);
  });
});
