import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemorySchema } from '../src/features/memories/memories.schemas';
import { api, expectError, postJson, seedDemo } from './seed';

/**
 * Memory writes under concurrency: a write that applied is acknowledged as applied whatever lands right after it,
 * and conditional writes (If-Match) let exactly one of several writers of one version through.
 */

function patch(memoryId: string, body: unknown, headers: Record<string, string> = {}) {
  return api(`/v1/data/memories/${memoryId}`, 'org', {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function newMemory(title: string): Promise<string> {
  const res = await postJson('/v1/data/memories', 'org', { brandId: 'brand_acme', title, content: 'race' });
  expect(res.status).toBe(201);
  return MemorySchema.parse(res.body).memoryId;
}

async function revisionRequestIds(memoryId: string, action: string): Promise<string[]> {
  const { results } = await env.DB.prepare('SELECT request_id FROM memory_revisions WHERE memory_id = ? AND action = ?')
    .bind(memoryId, action)
    .all<{ request_id: string }>();
  return results.map((r) => r.request_id);
}

beforeAll(async () => {
  await seedDemo();
  await env.DB.prepare("UPDATE api_keys SET memories_write = 1 WHERE id = 'key_demo_org'").run();
});

describe('a write is acknowledged from itself', () => {
  it('an update racing a delete is 200 exactly when its revision was recorded, and the 200 shows the update', async () => {
    const ids = await Promise.all(Array.from({ length: 16 }, (_, i) => newMemory(`race ${i}`)));
    const outcomes = await Promise.all(
      ids.map(async (id, i) => {
        const [updated] = await Promise.all([
          patch(id, { title: `updated ${i}` }),
          api(`/v1/data/memories/${id}`, 'org', { method: 'DELETE' }),
        ]);
        return { id, i, updated };
      }),
    );
    for (const { id, i, updated } of outcomes) {
      const requestId = updated.headers.get('x-request-id');
      const recorded = (await revisionRequestIds(id, 'update')).includes(requestId ?? '');
      if (updated.status === 200) {
        expect(recorded, `update of ${id} answered 200 but was not recorded`).toBe(true);
        const memory = MemorySchema.parse(updated.body);
        expect(memory.title).toBe(`updated ${i}`);
        expect(updated.headers.get('etag')).toBe(`"${memory.version}"`);
      } else {
        expectError(updated, 404, 'MEMORY_NOT_FOUND');
        expect(recorded, `update of ${id} answered 404 but its revision was committed`).toBe(false);
      }
    }
  }, 60_000);

  it('a create is answered with the memory as created even when it is deleted right after', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await postJson('/v1/data/memories', 'org', { brandId: 'brand_acme', title: `created ${i}`, content: 'c' });
        const id = MemorySchema.parse(res.body).memoryId;
        const del = await api(`/v1/data/memories/${id}`, 'org', { method: 'DELETE' });
        return { res, del, i };
      }),
    );
    for (const { res, del, i } of results) {
      expect(res.status).toBe(201);
      expect(MemorySchema.parse(res.body)).toMatchObject({ title: `created ${i}`, version: 1 });
      expect(res.headers.get('etag')).toBe('"1"');
      expect(del.status).toBe(200);
      expect(del.headers.get('etag')).toBe('"2"');
    }
  }, 60_000);
});

describe('If-Match', () => {
  it('20 concurrent PATCHes of one version: exactly one 200, nineteen 412, and only that change is stored', async () => {
    const id = await newMemory('contended');
    const read = await api(`/v1/data/memories/${id}`, 'org');
    const etag = read.headers.get('etag');
    expect(etag).toBe('"1"');
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => patch(id, { content: `writer ${i}` }, { 'if-match': etag ?? '' })),
    );
    const winners = responses.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const r of responses.filter((res) => res.status !== 200)) {
      const error = expectError(r, 412, 'PRECONDITION_FAILED');
      expect(error.details).toMatchObject({ memoryId: id, currentVersion: 2, expectedVersions: [1] });
    }
    const winner = MemorySchema.parse(winners[0]?.body);
    expect(winner.version).toBe(2);
    const now = await api(`/v1/data/memories/${id}`, 'org');
    expect(MemorySchema.parse(now.body)).toMatchObject({ content: winner.content, version: 2 });
    expect(now.headers.get('etag')).toBe('"2"');
    expect(await revisionRequestIds(id, 'update')).toEqual([winners[0]?.headers.get('x-request-id')]);
  }, 60_000);

  it('a stale, weak or foreign tag is 412 and changes nothing; *, a list holding the current tag, or none applies', async () => {
    const id = await newMemory('tags');
    expect((await patch(id, { title: 'v2' })).status).toBe(200);
    for (const tag of ['"1"', 'W/"2"', '"abc"', '"1", "3"']) {
      expectError(await patch(id, { title: 'no' }, { 'if-match': tag }), 412, 'PRECONDITION_FAILED');
    }
    expect(MemorySchema.parse((await api(`/v1/data/memories/${id}`, 'org')).body)).toMatchObject({ title: 'v2', version: 2 });
    expect((await patch(id, { title: 'v3' }, { 'if-match': '"1", "2"' })).headers.get('etag')).toBe('"3"');
    expect((await patch(id, { title: 'v4' }, { 'if-match': '*' })).headers.get('etag')).toBe('"4"');
    expectError(
      await api(`/v1/data/memories/${id}`, 'org', { method: 'DELETE', headers: { 'if-match': '"3"' } }),
      412,
      'PRECONDITION_FAILED',
    );
    const del = await api(`/v1/data/memories/${id}`, 'org', { method: 'DELETE', headers: { 'if-match': '"4"' } });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ memoryId: id, deleted: true, version: 5 });
    // Deleted: 404 whatever the tag, as for any memory the caller cannot see.
    expectError(await patch(id, { title: 'gone' }, { 'if-match': '"5"' }), 404, 'MEMORY_NOT_FOUND');
  });
});
