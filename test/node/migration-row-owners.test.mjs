// Migration 0009 (issue 33) on a database that already holds rows: query_log and feedback rows are brought to the
// ownership rule (src/auth/ownership.ts), and catalog versions recorded before it get their per-organization parts.
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openD1 } from '../../scripts/lib/d1.mjs';
import { applyMigrations, MIGRATIONS_DIR } from '../../scripts/lib/migrations.mjs';

/** @type {string} */
let stateDir;
/** @type {string} */
let before;
/** @type {import('../../scripts/lib/d1.mjs').D1Executor} */
let db;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'migration-0009-'));
  before = await mkdtemp(join(tmpdir(), 'migrations-before-0009-'));
  for (const name of await readdir(MIGRATIONS_DIR)) {
    if (Number.parseInt(name, 10) < 9) await cp(join(MIGRATIONS_DIR, name), join(before, name));
  }
  db = await openD1({ persistTo: stateDir });
  await applyMigrations(db, before);
}, 60_000);

afterAll(async () => {
  await db?.close();
  for (const dir of [stateDir, before]) if (dir) await rm(dir, { recursive: true, force: true });
});

const plan = (entries) => JSON.stringify(entries).replaceAll("'", "''");

describe('migration 0009 on existing rows', () => {
  it('drops an unverified brand, gives brand rows their org, and places old catalog versions per organization', async () => {
    await db.execute(
      `INSERT INTO organizations (id, name, created_at) VALUES ('org_a', 'A', 0), ('org_b', 'B', 0);
       INSERT INTO brands (id, org_id, name, dataset, created_at) VALUES ('brand_a', 'org_a', 'A', 'a', 0), ('brand_b', 'org_b', 'B', 'b', 0);
       INSERT INTO query_log (id, request_id, principal_kind, principal_id, org_id, brand_id, dry_run, transport, outcome, created_at) VALUES
         ('ql_refused', 'r1', 'key', 'key_b', 'org_b', 'brand_a', 0, 'rest', 'FORBIDDEN_BRAND', 1),
         ('ql_two_org', 'r2', 'oauth', 'grant_x', NULL, 'brand_b', 0, 'mcp', 'OK', 2),
         ('ql_fine', 'r3', 'key', 'key_a', 'org_a', 'brand_a', 0, 'rest', 'OK', 3);
       INSERT INTO feedback (id, request_id, principal_kind, principal_id, org_id, brand_id, summary, recent_queries, created_at) VALUES
         ('fb_two_org', 'r4', 'oauth', 'grant_x', NULL, 'brand_b', 'x', '[]', 4);
       INSERT INTO saved_queries (id, brand_id, name, sql, created_at) VALUES ('sq_b', 'brand_b', 'b', 'SELECT 1', 0);
       INSERT INTO reports (id, type, org_id, brand_id, name, created_at) VALUES ('rpt_sys', 'system', NULL, NULL, 'S', 0);
       INSERT INTO catalog_versions (id, content_hash, plan_hash, applied_by, applied_at, source, summary, plan_json) VALUES
         ('cv_b', 'h1', 'p1', 'x', 1, 'catalogs/b', '1 to add', '${plan([
           { action: 'add', kind: 'savedQuery', id: 'sq_b' },
           { action: 'remove', kind: 'savedQuery', id: 'sq_gone' },
         ])}'),
         ('cv_sys', 'h2', 'p2', 'x', 2, 'catalogs/all', '1 to change', '${plan([
           { action: 'change', kind: 'report', id: 'rpt_sys', fields: [] },
           { action: 'remove', kind: 'report', id: 'rpt_kept', skipped: true },
         ])}')`,
    );
    // 0009 and whatever came after it.
    expect((await applyMigrations(db))[0]).toBe('0009_row_owners.sql');

    const [logRows = []] = await db.execute('SELECT id, org_id, brand_id FROM query_log ORDER BY id');
    expect(logRows).toEqual([
      { id: 'ql_fine', org_id: 'org_a', brand_id: 'brand_a' },
      { id: 'ql_refused', org_id: 'org_b', brand_id: null },
      { id: 'ql_two_org', org_id: 'org_b', brand_id: 'brand_b' },
    ]);
    const [feedbackRows = []] = await db.execute('SELECT org_id, brand_id FROM feedback');
    expect(feedbackRows).toEqual([{ org_id: 'org_b', brand_id: 'brand_b' }]);
    const [versionRows = []] = await db.execute('SELECT version_id, org_id, summary FROM catalog_version_orgs ORDER BY version_id, org_id');
    expect(versionRows).toEqual([
      { version_id: 'cv_b', org_id: 'org_b', summary: '1 to add, 0 to change, 0 to remove' },
      { version_id: 'cv_sys', org_id: 'org_a', summary: '0 to add, 1 to change, 0 to remove' },
      { version_id: 'cv_sys', org_id: 'org_b', summary: '0 to add, 1 to change, 0 to remove' },
    ]);
  });
});
