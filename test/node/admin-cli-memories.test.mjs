// The admin CLI's memory commands and `key create --memories write`, against a throwaway local D1 (--persist-to a
// temp dir): what they print, what they store, and that every write is recorded. Commands run in this process
// (`runAdmin`, the CLI's whole command layer) on one open local D1, as test/node/admin-cli.test.mjs does; that file's
// smoke tests prove the command line and wrangler's view of the same state.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminTestDatabase } from './admin-in-process.mjs';

const t = adminTestDatabase('admin-cli-memories-');
const { admin, adminJson, rows } = t;

beforeAll(async () => {
  await rows(
    `INSERT INTO organizations (id, name, created_at) VALUES ('org_m', 'M', 0);
     INSERT INTO brands (id, org_id, name, dataset, created_at) VALUES ('brand_m', 'org_m', 'M brand', 'm_ds', 0)`,
  );
});

describe('key create --memories', () => {
  it('write grants memories:write; the default is read-only; anything else is a usage error', async () => {
    const writer = await adminJson('key', 'create', '--brand', 'brand_m', '--name', 'writer', '--memories', 'write');
    const reader = await adminJson('key', 'create', '--brand', 'brand_m', '--name', 'reader');
    expect([writer.memories, reader.memories]).toEqual(['write', 'read']);
    expect(await rows('SELECT id FROM api_keys WHERE memories_write = 1 ORDER BY id')).toEqual([{ id: writer.id }]);
    const bad = await admin('key', 'create', '--brand', 'brand_m', '--name', 'x', '--memories', 'admin');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--memories must be read or write, got admin');
  }, 120_000);
});

describe('memory create, update, delete, restore', () => {
  it('writes a system memory and records each change with the CLI as the writer', async () => {
    const file = join(t.stateDir, 'content.md');
    await writeFile(file, '`revenue` is **gross**: after discounts, before returns.\n');
    const created = await adminJson(
      'memory',
      'create',
      '--system',
      '--table',
      'fact__orders',
      '--title',
      'revenue is gross',
      '--content-file',
      file,
      '--author',
      'Data team',
    );
    expect(created).toMatchObject({
      scope: 'system',
      brandId: null,
      table: 'fact__orders',
      title: 'revenue is gross',
      content: '`revenue` is **gross**: after discounts, before returns.\n',
      author: { kind: 'cli', name: 'Data team' },
    });
    const id = created.memoryId;

    const updated = await adminJson('memory', 'update', id, '--no-table', '--title', "revenue isn't net", '--author', 'Data team');
    expect(updated).toMatchObject({ memoryId: id, table: null, title: "revenue isn't net" });

    expect(await adminJson('memory', 'delete', id)).toEqual({ id, deleted: true });
    const listed = await adminJson('memory', 'list', '--system', '--deleted');
    expect(listed.memories).toEqual([expect.objectContaining({ id, deletedAt: expect.any(String) })]);
    expect((await adminJson('memory', 'list', '--system')).memories).toEqual([]);

    expect(await adminJson('memory', 'restore', id)).toMatchObject({ memoryId: id, title: "revenue isn't net" });
    const revs = await rows(
      `SELECT action, actor_kind, actor_id, transport, json_extract(before_json, '$.title') AS before_title FROM memory_revisions WHERE memory_id = '${id}' ORDER BY created_at, rowid`,
    );
    expect(revs.map((r) => [r.action, r.actor_kind, r.actor_id, r.transport])).toEqual([
      ['create', 'cli', null, 'cli'],
      ['update', 'cli', null, 'cli'],
      ['delete', 'cli', null, 'cli'],
      ['restore', 'cli', null, 'cli'],
    ]);
    expect(revs[1].before_title).toBe('revenue is gross');
  }, 180_000);

  it.each([
    [
      'content over 8 KB',
      ['--brand', 'brand_m', '--title', 't', '--content', 'x'.repeat(8193)],
      'content must be at most 8192 bytes of UTF-8, got 8193',
    ],
    [
      'two owners',
      ['--brand', 'brand_m', '--org', 'org_m', '--title', 't', '--content', 'c'],
      'give exactly one of --system, --org ORG_ID or --brand BRAND_ID',
    ],
    [
      'a qualified table',
      ['--brand', 'brand_m', '--title', 't', '--content', 'c', '--table', 'm_ds.fact__orders'],
      '--table: table must be a table name',
    ],
  ])('memory create with %s exits 2', async (_, args, message) => {
    args = ['memory', 'create', ...args];
    const r = await admin(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });

  it('an unknown brand or memory exits 1 with a clear message', async () => {
    const missing = await admin('memory', 'create', '--brand', 'brand_nope', '--title', 't', '--content', 'c');
    expect([missing.code, missing.stderr.trim()]).toEqual([1, 'error: brand brand_nope does not exist']);
    const gone = await admin('memory', 'delete', 'mem_nope');
    expect([gone.code, gone.stderr.trim()]).toEqual([1, 'error: no live memory mem_nope']);
  }, 120_000);
});
