import { env } from 'cloudflare:test';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadAdminReach } from '../src/auth/oauth-principal';
import { adminWriter, deleteManagedMemory, restoreManagedMemory } from '../src/features/memories/admin';
import { MEMORY_LIMITS } from '../src/features/memories/rules';
import { MemoryListSchema, MemorySchema } from '../src/features/memories/memories.schemas';
import { DEMO_MEMORIES } from './demo-catalog';
import { api, expectError, postJson, seedDemo, type TestKey } from './seed';

/** Grants or withdraws `memories:write` the way the admin CLI and pages store it. */
async function setWrite(keyId: string, on: boolean) {
  await env.DB.prepare('UPDATE api_keys SET memories_write = ? WHERE id = ?')
    .bind(on ? 1 : 0, keyId)
    .run();
}

function send(method: string, path: string, key: TestKey, body: unknown) {
  return api(path, key, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const RevisionRow = z.object({
  action: z.string(),
  before_json: z.string().nullable(),
  after_json: z.string().nullable(),
  actor_kind: z.string(),
  actor_id: z.string().nullable(),
  actor_name: z.string(),
  transport: z.string(),
  request_id: z.string().nullable(),
});

async function revisions(memoryId: string) {
  const { results } = await env.DB.prepare(
    'SELECT action, before_json, after_json, actor_kind, actor_id, actor_name, transport, request_id FROM memory_revisions WHERE memory_id = ? ORDER BY created_at, rowid',
  )
    .bind(memoryId)
    .all();
  return z.array(RevisionRow).parse(results);
}

beforeAll(async () => {
  await seedDemo();
});

beforeEach(async () => {
  await setWrite('key_demo_org', true);
  await setWrite('key_demo_brand', true);
});

describe('write permission', () => {
  it('a key without memories:write reads memories but every write is 403 MEMORY_WRITE_FORBIDDEN and changes nothing', async () => {
    await setWrite('key_demo_brand', false);
    const before = await env.DB.prepare('SELECT count(*) AS n FROM memory_revisions').first('n');
    expect((await api('/v1/data/memories', 'brand')).status).toBe(200);
    const created = await postJson('/v1/data/memories', 'brand', { title: 't', content: 'c' });
    expect(expectError(created, 403, 'MEMORY_WRITE_FORBIDDEN').message).toMatch(/--memories write/);
    expectError(await send('PATCH', '/v1/data/memories/mem_demo_acme_orders_size', 'brand', { title: 'x' }), 403, 'MEMORY_WRITE_FORBIDDEN');
    expectError(await api('/v1/data/memories/mem_demo_acme_orders_size', 'brand', { method: 'DELETE' }), 403, 'MEMORY_WRITE_FORBIDDEN');
    expect(await env.DB.prepare('SELECT count(*) AS n FROM memory_revisions').first('n')).toBe(before);
    expect(MemorySchema.parse((await api('/v1/data/memories/mem_demo_acme_orders_size', 'brand')).body).title).toBe(
      DEMO_MEMORIES.find((m) => m.id === 'mem_demo_acme_orders_size')?.title,
    );
  });

  it('granting the permission applies to the next request', async () => {
    await setWrite('key_demo_brand', false);
    expectError(await postJson('/v1/data/memories', 'brand', { title: 't', content: 'c' }), 403, 'MEMORY_WRITE_FORBIDDEN');
    await setWrite('key_demo_brand', true);
    expect((await postJson('/v1/data/memories', 'brand', { title: 't', content: 'c' })).status).toBe(201);
  });

  it.each([
    ['brand key writing an org memory', 'brand' as const, { scope: 'org', title: 't', content: 'c' }, /organization-wide/],
    ['anyone writing a system memory', 'org' as const, { scope: 'system', title: 't', content: 'c' }, /admin CLI/],
  ])('%s is 403 MEMORY_WRITE_FORBIDDEN', async (_, key, body, message) => {
    expect(expectError(await postJson('/v1/data/memories', key, body), 403, 'MEMORY_WRITE_FORBIDDEN').message).toMatch(message);
  });

  it("a visible memory outside the writer's scope is 403 on PATCH and DELETE (system for everyone, org for a brand key)", async () => {
    for (const [key, id] of [
      ['org', 'mem_demo_orders_revenue'],
      ['brand', 'mem_demo_orders_revenue'],
      ['brand', 'mem_demo_monthly_date_column'],
    ] as const) {
      expectError(await send('PATCH', `/v1/data/memories/${id}`, key, { title: 'x' }), 403, 'MEMORY_WRITE_FORBIDDEN');
      expectError(await api(`/v1/data/memories/${id}`, key, { method: 'DELETE' }), 403, 'MEMORY_WRITE_FORBIDDEN');
    }
  });
});

describe('create, read, update, delete, with the audit trail', () => {
  it('records who, when, through what and what each write replaced', async () => {
    const created = await postJson('/v1/data/memories', 'org', {
      brandId: 'brand_globex',
      table: 'agg__daily_revenue',
      title: '  store days  ',
      content: '**Closed** on 25 December.',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const m = MemorySchema.parse(created.body);
    expect(m).toMatchObject({
      scope: 'brand',
      brandId: 'brand_globex',
      table: 'agg__daily_revenue',
      title: 'store days',
      content: '**Closed** on 25 December.',
      author: { kind: 'key', name: 'Demo org key (org_demo)' },
      updatedBy: { kind: 'key', name: 'Demo org key (org_demo)' },
    });
    expect(m.memoryId).toMatch(/^mem_[0-9a-f]{20}$/);
    expect(JSON.stringify(m)).not.toContain('key_demo_org');
    expect((await api(`/v1/data/memories/${m.memoryId}`, 'org')).body).toEqual(m);

    const updated = await send('PATCH', `/v1/data/memories/${m.memoryId}`, 'org', {
      table: null,
      content: 'Closed on 25 and 26 December.',
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(MemorySchema.parse(updated.body)).toMatchObject({ table: null, title: 'store days', content: 'Closed on 25 and 26 December.' });

    const deleted = await api(`/v1/data/memories/${m.memoryId}`, 'org', { method: 'DELETE' });
    expect(deleted.body).toEqual({ memoryId: m.memoryId, deleted: true, version: 3 });
    expectError(await api(`/v1/data/memories/${m.memoryId}`, 'org'), 404, 'MEMORY_NOT_FOUND');
    expectError(await api(`/v1/data/memories/${m.memoryId}`, 'org', { method: 'DELETE' }), 404, 'MEMORY_NOT_FOUND');
    const listed = MemoryListSchema.parse((await api('/v1/data/memories?brandId=brand_globex', 'org')).body);
    expect(listed.memories.map((x) => x.memoryId)).not.toContain(m.memoryId);

    const revs = await revisions(m.memoryId);
    expect(revs.map((r) => r.action)).toEqual(['create', 'update', 'delete']);
    for (const r of revs)
      expect(r).toMatchObject({ actor_kind: 'key', actor_id: 'key_demo_org', actor_name: 'Demo org key (org_demo)', transport: 'rest' });
    expect(revs.every((r) => r.request_id?.startsWith('req_'))).toBe(true);
    const state = (s: string | null) => (s === null ? null : JSON.parse(s));
    expect(state(revs[0]!.before_json)).toBeNull();
    expect(state(revs[1]!.before_json)).toEqual({
      title: 'store days',
      table: 'agg__daily_revenue',
      content: '**Closed** on 25 December.',
      deletedAt: null,
    });
    expect(state(revs[1]!.after_json)).toEqual({
      title: 'store days',
      table: null,
      content: 'Closed on 25 and 26 December.',
      deletedAt: null,
    });
    expect(state(revs[2]!.before_json)).toEqual(state(revs[1]!.after_json));
    expect(state(revs[2]!.after_json)).toBeNull();
  });

  it('an org key writes an org memory of its org, visible to the brand key of that org', async () => {
    const created = await postJson('/v1/data/memories', 'org', {
      scope: 'org',
      title: 'fiscal year',
      content: 'The group fiscal year starts in April.',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const m = MemorySchema.parse(created.body);
    expect(m).toMatchObject({ scope: 'org', brandId: null, table: null });
    expect((await api(`/v1/data/memories/${m.memoryId}`, 'brand')).status).toBe(200);
    expectError(await api(`/v1/data/memories/${m.memoryId}`, 'other'), 404, 'MEMORY_NOT_FOUND');
  });
});

describe('limits and validation: clear errors, nothing cut', () => {
  it.each([
    [
      'content over 8 KB',
      { title: 't', content: 'é'.repeat(MEMORY_LIMITS.contentBytes / 2 + 1) },
      /content must be at most 8192 bytes of UTF-8, got 8194/,
    ],
    ['empty content', { title: 't', content: '   ' }, /content must not be empty/],
    ['a title over 200 characters', { title: 'x'.repeat(201), content: 'c' }, /title must be at most 200 characters/],
    ['a qualified table name', { title: 't', content: 'c', table: 'service-v1.acme.fact__orders' }, /table must be a table name/],
    ['an unknown field', { title: 't', content: 'c', tags: ['x'] }, /tags/],
    [
      'brandId on an org memory',
      { scope: 'org', brandId: 'brand_acme', title: 't', content: 'c' },
      /organization memories have no brandId/,
    ],
  ])('%s is 400 VALIDATION', async (_, body, message) => {
    expect(expectError(await postJson('/v1/data/memories', 'org', { brandId: 'brand_acme', ...body }), 400, 'VALIDATION').message).toMatch(
      message,
    );
  });

  it('content of exactly 8 KB is stored whole', async () => {
    const content = 'é'.repeat(MEMORY_LIMITS.contentBytes / 2);
    const res = await postJson('/v1/data/memories', 'brand', { title: 'full', content });
    expect(res.status).toBe(201);
    expect(MemorySchema.parse(res.body).content).toBe(content);
  });

  it('PATCH with nothing to change is 400', async () => {
    expectError(await send('PATCH', '/v1/data/memories/mem_demo_acme_orders_size', 'brand', {}), 400, 'VALIDATION');
  });

  it(`a brand with ${MEMORY_LIMITS.perOwner} live memories refuses the next with 409 MEMORY_LIMIT_EXCEEDED; deleting one frees a place`, async () => {
    const live = Number(
      await env.DB.prepare(`SELECT count(*) AS n FROM memories WHERE brand_id = 'brand_globex' AND deleted_at IS NULL`).first('n'),
    );
    const fill = Array.from({ length: MEMORY_LIMITS.perOwner - live }, (_, i) =>
      env.DB.prepare(
        `INSERT INTO memories (id, scope, brand_id, title, content, author_kind, author_name, updated_by_kind, updated_by_name, created_at, updated_at)
         VALUES (?, 'brand', 'brand_globex', 'filler', 'filler', 'cli', 'test', 'cli', 'test', 0, 0)`,
      ).bind(`mem_fill_${i}`),
    );
    await env.DB.batch(fill);
    const refused = await postJson('/v1/data/memories', 'org', { brandId: 'brand_globex', title: 'one more', content: 'c' });
    expect(expectError(refused, 409, 'MEMORY_LIMIT_EXCEEDED').message).toMatch(/brand brand_globex already has 200 memories/);
    expect(await env.DB.prepare(`SELECT count(*) AS n FROM memories WHERE title = 'one more'`).first('n')).toBe(0);
    expect((await api('/v1/data/memories/mem_fill_0', 'org', { method: 'DELETE' })).status).toBe(200);
    expect((await postJson('/v1/data/memories', 'org', { brandId: 'brand_globex', title: 'one more', content: 'c' })).status).toBe(201);
    await env.DB.prepare(`DELETE FROM memories WHERE id LIKE 'mem_fill_%' AND id NOT IN (SELECT memory_id FROM memory_revisions)`).run();
  });
});

describe('listMemories filters and paging', () => {
  it('filters by table and by text, case-insensitively', async () => {
    const byTable = MemoryListSchema.parse((await api('/v1/data/memories?brandId=brand_acme&table=fact__orders', 'org')).body);
    expect(byTable.memories.map((m) => m.memoryId)).toEqual(['mem_demo_orders_revenue', 'mem_demo_acme_orders_size']);
    const byText = MemoryListSchema.parse((await api('/v1/data/memories?q=SHIPPING', 'other')).body);
    expect(byText.memories.map((m) => m.memoryId)).toEqual(['mem_demo_orders_revenue']);
  });

  it('pages with a signed cursor bound to the key and filters; every memory once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await api(
        `/v1/data/memories?brandId=brand_umbrella&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        'other',
      );
      const page = MemoryListSchema.parse(res.body);
      expect(page.memories.length).toBeLessThanOrEqual(2);
      expect(page.hasMore).toBe(page.nextCursor !== null);
      seen.push(...page.memories.map((m) => m.memoryId));
      if (page.nextCursor && cursor === null) {
        expectError(await api(`/v1/data/memories?limit=2&cursor=${encodeURIComponent(page.nextCursor)}`, 'other'), 400, 'VALIDATION');
        expectError(
          await api(`/v1/data/memories?brandId=brand_acme&limit=2&cursor=${encodeURIComponent(page.nextCursor)}`, 'org'),
          400,
          'VALIDATION',
        );
      }
      cursor = page.nextCursor;
    } while (cursor);
    // Order: scope (system, org, brand), owner, creation time, id; the seed creates its memories at one instant.
    expect(seen).toEqual([
      'mem_demo_customer_segments',
      'mem_demo_daily_revenue_source',
      'mem_demo_monthly_kpis_source',
      'mem_demo_orders_revenue',
      'mem_demo_umbrella_orders_currency',
      'mem_demo_umbrella_web_events',
    ]);
  });

  it.each(['limit=0', 'limit=201', 'cursor=nope', 'table=a.b'])('?%s is 400 VALIDATION', async (query) => {
    expectError(await api(`/v1/data/memories?${query}`, 'org'), 400, 'VALIDATION');
  });
});

describe('OpenAPI document', () => {
  const Operation = z.object({
    operationId: z.string(),
    tags: z.array(z.string()),
    responses: z.record(z.string(), z.object({ description: z.string() })),
  });
  const Doc = z.object({ paths: z.record(z.string(), z.record(z.string(), Operation)) });

  it.each([
    ['get', '/v1/data/memories', 'listMemories', { 200: [], 400: ['VALIDATION'], 403: ['FORBIDDEN_BRAND'] }],
    [
      'post',
      '/v1/data/memories',
      'createMemory',
      { 201: [], 403: ['FORBIDDEN_BRAND', 'MEMORY_WRITE_FORBIDDEN'], 409: ['MEMORY_LIMIT_EXCEEDED'] },
    ],
    ['get', '/v1/data/memories/{memoryId}', 'getMemory', { 200: [], 404: ['MEMORY_NOT_FOUND'] }],
    [
      'patch',
      '/v1/data/memories/{memoryId}',
      'updateMemory',
      { 200: [], 403: ['MEMORY_WRITE_FORBIDDEN'], 404: ['MEMORY_NOT_FOUND'], 412: ['PRECONDITION_FAILED'] },
    ],
    [
      'delete',
      '/v1/data/memories/{memoryId}',
      'deleteMemory',
      { 200: [], 403: ['MEMORY_WRITE_FORBIDDEN'], 404: ['MEMORY_NOT_FOUND'], 412: ['PRECONDITION_FAILED'] },
    ],
  ] as const)('%s %s is %s under the Memories tag, with its status codes', async (method, path, operationId, statuses) => {
    const doc = Doc.parse((await api('/v1/data/openapi.json', null)).body);
    const op = doc.paths[path]?.[method];
    expect(op).toMatchObject({ operationId, tags: ['Memories'] });
    for (const [status, codes] of Object.entries(statuses)) {
      for (const code of codes) expect(op?.responses[status]?.description, `${status} ${code}`).toContain(`\`${code}\``);
      expect(op?.responses[status], status).toBeDefined();
    }
  });
});

describe('admin pages: restore (domain functions behind /admin/memories)', () => {
  it('restores a deleted memory with a restore revision; refuses a brand admin on an org memory and an owner at its limit', async () => {
    const orgAdmin = await loadAdminReach(env, 'user_demo_org_admin');
    const brandAdmin = await loadAdminReach(env, 'user_demo_brand_admin');
    if (!orgAdmin || !brandAdmin) throw new Error('demo admins missing');
    const writer = adminWriter(orgAdmin, 'req_test', Date.now());

    await deleteManagedMemory(env, orgAdmin, writer, 'mem_demo_monthly_date_column');
    expectError(await api('/v1/data/memories/mem_demo_monthly_date_column', 'brand'), 404, 'MEMORY_NOT_FOUND');
    await expect(
      restoreManagedMemory(env, brandAdmin, adminWriter(brandAdmin, null, Date.now()), 'mem_demo_monthly_date_column'),
    ).rejects.toMatchObject({
      code: 'MEMORY_WRITE_FORBIDDEN',
    });
    await restoreManagedMemory(env, orgAdmin, { ...writer, now: Date.now() }, 'mem_demo_monthly_date_column');
    expect((await api('/v1/data/memories/mem_demo_monthly_date_column', 'brand')).status).toBe(200);
    const revs = await revisions('mem_demo_monthly_date_column');
    expect(revs.slice(-2).map((r) => [r.action, r.actor_kind, r.actor_id, r.transport])).toEqual([
      ['delete', 'user', 'user_demo_org_admin', 'admin'],
      ['restore', 'user', 'user_demo_org_admin', 'admin'],
    ]);
    expect(JSON.parse(revs.at(-1)!.before_json ?? '{}').deletedAt).toEqual(expect.any(Number));

    // At the limit, a restore is refused and the memory stays deleted.
    await deleteManagedMemory(env, orgAdmin, { ...writer, now: Date.now() }, 'mem_demo_monthly_date_column');
    const live = Number(
      await env.DB.prepare(`SELECT count(*) AS n FROM memories WHERE org_id = 'org_demo' AND deleted_at IS NULL`).first('n'),
    );
    await env.DB.batch(
      Array.from({ length: MEMORY_LIMITS.perOwner - live }, (_, i) =>
        env.DB.prepare(
          `INSERT INTO memories (id, scope, org_id, title, content, author_kind, author_name, updated_by_kind, updated_by_name, created_at, updated_at)
           VALUES (?, 'org', 'org_demo', 'filler', 'filler', 'cli', 'test', 'cli', 'test', 0, 0)`,
        ).bind(`mem_orgfill_${i}`),
      ),
    );
    await expect(restoreManagedMemory(env, orgAdmin, { ...writer, now: Date.now() }, 'mem_demo_monthly_date_column')).rejects.toMatchObject(
      {
        code: 'MEMORY_LIMIT_EXCEEDED',
      },
    );
    expect(
      await env.DB.prepare(`SELECT deleted_at IS NOT NULL AS d FROM memories WHERE id = 'mem_demo_monthly_date_column'`).first('d'),
    ).toBe(1);
    await env.DB.prepare(`DELETE FROM memories WHERE id LIKE 'mem_orgfill_%'`).run();
  });
});
