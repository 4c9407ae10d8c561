// The admin CLI's console commands, `feedback list|show|resolve` and `history list|totals`, against a throwaway local
// D1 with the migrations applied, run in this process as test/node/admin-cli-memories.test.mjs does. Each is checked
// as an org administrator (--as), a brand administrator, another org's administrator, and the operator (no --as).
import { beforeAll, describe, expect, it } from 'vitest';
import { adminTestDatabase } from './admin-in-process.mjs';

const t = adminTestDatabase('admin-cli-console-');
const { admin, adminJson, rows } = t;
const TIB = 1024 ** 4;

beforeAll(async () => {
  const now = Date.now();
  await rows(
    `INSERT INTO organizations (id, name, created_at) VALUES ('org_a', 'A', 0), ('org_b', 'B', 0);
     INSERT INTO brands (id, org_id, name, dataset, created_at) VALUES ('brand_a1', 'org_a', 'A one', 'a1', 0), ('brand_a2', 'org_a', 'A two', 'a2', 0),
       ('brand_b1', 'org_b', 'B one', 'b1', 0);
     INSERT INTO users (id, email, name, password_hash, password_salt, password_iterations, created_at) VALUES
       ('u_org', 'org@a.test', NULL, 'x', 'x', 1, 0), ('u_brand', 'brand@a.test', NULL, 'x', 'x', 1, 0), ('u_other', 'other@b.test', NULL, 'x', 'x', 1, 0);
     INSERT INTO memberships (user_id, org_id, brand_id, role, created_at) VALUES ('u_org', 'org_a', NULL, 'admin', 0),
       ('u_brand', NULL, 'brand_a1', 'admin', 0), ('u_other', 'org_b', NULL, 'admin', 0);
     INSERT INTO api_keys (id, name, prefix, secret_hash, org_id, brand_id, created_at) VALUES
       ('key_a', 'A org key', 'wqk_a', 'h1', 'org_a', NULL, 0), ('key_b', 'B org key', 'wqk_b', 'h2', 'org_b', NULL, 0);
     INSERT INTO feedback (id, request_id, principal_kind, principal_id, org_id, brand_id, summary, expected, observed, severity, transcript,
                           recent_queries, created_at, user_id) VALUES
       ('fb_a1', 'r1', 'key', 'key_a', 'org_a', 'brand_a1', 'A1 revenue doubled', '1', '2', 'high',
        '[{"role":"user","content":"why?"},{"role":"assistant","content":"it doubled"}]',
        '[{"id":"ql_a1","requestId":"req_a1","brandId":"brand_a1","queryId":null,"period":null,"sql":"SELECT a1","dryRun":false,"transport":"rest","outcome":"OK","bytesProcessed":1,"bytesBilled":1,"rowCount":1,"durationMs":5,"createdAt":${now - 1000}}]',
        ${now - 500}, NULL),
       ('fb_a2', 'r2', 'oauth', 'grant_x', 'org_a', 'brand_a2', 'A2 orders missing', NULL, NULL, 'low', NULL, '[]', ${now - 400}, 'u_org'),
       ('fb_org', 'r3', 'key', 'key_a', 'org_a', NULL, 'Everything late', NULL, NULL, NULL, NULL, '[]', ${now - 300}, NULL),
       ('fb_b1', 'r4', 'key', 'key_b', 'org_b', 'brand_b1', 'B secret issue', NULL, NULL, 'medium', NULL, '[]', ${now - 200}, NULL);
     INSERT INTO query_log (id, request_id, principal_kind, principal_id, org_id, user_id, brand_id, query_id, period, sql, dry_run, transport,
                            outcome, bytes_processed, bytes_billed, row_count, duration_ms, created_at) VALUES
       ('ql_a1', 'req_a1', 'key', 'key_a', 'org_a', NULL, 'brand_a1', NULL, NULL, 'SELECT a1', 0, 'rest', 'OK', ${TIB}, ${TIB}, 1, 5, ${now - 1000}),
       ('ql_a2', 'req_a2', 'oauth', 'grant_x', 'org_a', 'u_org', 'brand_a2', 'rq_x', '{"startDate":"2026-01-01","endDate":"2026-01-31"}', 'SELECT a2', 0, 'mcp', 'QUERY_FAILED', 0, 0, 0, 7, ${now - 2000}),
       ('ql_a_old', 'req_a_old', 'key', 'key_a', 'org_a', NULL, 'brand_a1', NULL, NULL, 'SELECT old', 0, 'rest', 'OK', 10, 10, 1, 5, ${now - 10 * 86_400_000}),
       ('ql_b1', 'req_b1', 'key', 'key_b', 'org_b', NULL, 'brand_b1', NULL, NULL, 'SELECT b_secret', 0, 'rest', 'OK', ${2 * TIB}, ${2 * TIB}, 1, 5, ${now - 1000})`,
  );
}, 60_000);

const ids = (list) => list.map((x) => x.id).sort();

describe('feedback list|show|resolve', () => {
  it('lists what each administrator sees, and everything for the operator', async () => {
    expect(ids((await adminJson('feedback', 'list', '--as', 'org@a.test')).reports)).toEqual(['fb_a1', 'fb_a2', 'fb_org']);
    expect(ids((await adminJson('feedback', 'list', '--as', 'u_brand')).reports)).toEqual(['fb_a1']);
    expect(ids((await adminJson('feedback', 'list', '--as', 'other@b.test')).reports)).toEqual(['fb_b1']);
    expect(ids((await adminJson('feedback', 'list')).reports)).toEqual(['fb_a1', 'fb_a2', 'fb_b1', 'fb_org']);
    // Filters.
    expect(ids((await adminJson('feedback', 'list', '--as', 'org@a.test', '--severity', 'high')).reports)).toEqual(['fb_a1']);
    expect(ids((await adminJson('feedback', 'list', '--as', 'org@a.test', '--connection', 'grant_x')).reports)).toEqual(['fb_a2']);
    expect(ids((await adminJson('feedback', 'list', '--as', 'org@a.test', '--user', 'u_org')).reports)).toEqual(['fb_a2']);
    expect(ids((await adminJson('feedback', 'list', '--as', 'org@a.test', '--key', 'key_a')).reports)).toEqual(['fb_a1', 'fb_org']);
    expect(ids((await adminJson('feedback', 'list', '--brand', 'brand_b1')).reports)).toEqual(['fb_b1']);
    expect(ids((await adminJson('feedback', 'list', '--as', 'org@a.test', '--brand', 'brand_b1')).reports)).toEqual([]);
    const text = await admin('feedback', 'list', '--as', 'u_brand');
    expect(text.stdout).toMatch(/fb_a1 .* brand_a1 .* high .* open .* key A org key .* A1 revenue doubled/);
    const bad = await admin('feedback', 'list', '--from', 'last week');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--from: from must be a date YYYY-MM-DD');
    expect((await admin('feedback', 'list', '--as', 'nobody@x.test')).stderr).toContain('no user nobody@x.test');
  });

  it('shows one report with its transcript and attached queries; another org cannot', async () => {
    const shown = await adminJson('feedback', 'show', 'fb_a1', '--as', 'u_brand');
    expect(shown).toMatchObject({
      id: 'fb_a1',
      status: 'open',
      summary: 'A1 revenue doubled',
      transcript: [{ role: 'user', content: 'why?' }, { role: 'assistant' }],
    });
    expect(shown.recentQueries).toMatchObject([{ requestId: 'req_a1', sql: 'SELECT a1' }]);
    const text = await admin('feedback', 'show', 'fb_a1');
    expect(text.stdout).toContain('  user: why?');
    expect(text.stdout).toContain('SELECT a1');
    const refused = await admin('feedback', 'show', 'fb_a1', '--as', 'other@b.test');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('no report fb_a1 visible to other@b.test');
    expect((await admin('feedback', 'show', 'fb_org', '--as', 'u_brand')).code).toBe(1);
  });

  it('resolves with a note, records who; refuses without a note, outside the reach, and once final', async () => {
    const noNote = await admin('feedback', 'resolve', 'fb_a1', '--as', 'u_brand');
    expect(noNote.code).toBe(1);
    expect(noNote.stderr).toContain('say why in a note to mark the report resolved');
    const outside = await admin('feedback', 'resolve', 'fb_a2', '--as', 'u_brand', '--note', 'x');
    expect(outside.code).toBe(1);
    expect((await admin('feedback', 'resolve', 'fb_a1', '--as', 'other@b.test', '--note', 'x')).code).toBe(1);

    expect(await adminJson('feedback', 'resolve', 'fb_a1', '--as', 'u_brand', '--status', 'acknowledged')).toMatchObject({
      from: 'open',
      to: 'acknowledged',
    });
    expect(await adminJson('feedback', 'resolve', 'fb_a1', '--as', 'u_brand', '--note', 'Reloaded the table')).toMatchObject({
      from: 'acknowledged',
      to: 'resolved',
      by: 'brand@a.test via admin CLI',
    });
    const final = await admin('feedback', 'resolve', 'fb_a1', '--status', 'dismissed', '--note', 'again');
    expect(final.code).toBe(1);
    expect(final.stderr).toContain('a report that is resolved can become open, not dismissed');
    expect(
      await rows(
        "SELECT from_status, to_status, note, actor_kind, actor_name FROM feedback_status_changes WHERE feedback_id = 'fb_a1' ORDER BY created_at, id",
      ),
    ).toEqual([
      { from_status: 'open', to_status: 'acknowledged', note: null, actor_kind: 'cli', actor_name: 'brand@a.test via admin CLI' },
      {
        from_status: 'acknowledged',
        to_status: 'resolved',
        note: 'Reloaded the table',
        actor_kind: 'cli',
        actor_name: 'brand@a.test via admin CLI',
      },
    ]);
    const shown = await adminJson('feedback', 'show', 'fb_a1');
    expect(shown).toMatchObject({
      status: 'resolved',
      statusNote: 'Reloaded the table',
      history: [{ to: 'acknowledged' }, { to: 'resolved' }],
    });
  });
});

describe('history list|totals', () => {
  const requestIds = (list) => list.map((r) => r.requestId).sort();

  it('lists the runs each administrator sees, with filters, cost and CSV', async () => {
    expect(requestIds((await adminJson('history', 'list', '--as', 'org@a.test')).runs)).toEqual(['req_a1', 'req_a2', 'req_a_old']);
    expect(requestIds((await adminJson('history', 'list', '--as', 'u_brand')).runs)).toEqual(['req_a1', 'req_a_old']);
    expect(requestIds((await adminJson('history', 'list', '--as', 'other@b.test')).runs)).toEqual(['req_b1']);
    expect(requestIds((await adminJson('history', 'list')).runs)).toEqual(['req_a1', 'req_a2', 'req_a_old', 'req_b1']);
    expect(requestIds((await adminJson('history', 'list', '--as', 'org@a.test', '--outcome', 'error')).runs)).toEqual(['req_a2']);
    expect(
      requestIds((await adminJson('history', 'list', '--as', 'org@a.test', '--connection', 'grant_x', '--user', 'u_org')).runs),
    ).toEqual(['req_a2']);
    expect(requestIds((await adminJson('history', 'list', '--query', 'rq_x')).runs)).toEqual(['req_a2']);
    const a1 = (await adminJson('history', 'list', '--key', 'key_a', '--brand', 'brand_a1', '--limit', '1')).runs;
    expect(a1).toMatchObject([
      { requestId: 'req_a1', bytesBilled: TIB, costUsd: 6.25, transport: 'rest', caller: { kind: 'key', id: 'key_a', name: 'A org key' } },
    ]);
    const csv = await admin('history', 'list', '--as', 'u_brand', '--csv');
    expect(csv.code).toBe(0);
    const lines = csv.stdout.trim().split('\r\n');
    expect(lines[0]).toMatch(/^created_at,request_id,/);
    expect(lines).toHaveLength(3);
    expect(csv.stdout).not.toContain('b_secret');
  });

  it("totals per caller and brand for 1, 7 and 30 days, within the administrator's reach", async () => {
    const org = await adminJson('history', 'totals', '--as', 'org@a.test');
    expect(org.usdPerTib).toBe(6.25);
    const keyA = org.callers.find((c) => c.id === 'key_a');
    expect(keyA.windows).toEqual({
      1: { runs: 1, bytesBilled: TIB, costUsd: 6.25 },
      7: { runs: 1, bytesBilled: TIB, costUsd: 6.25 },
      30: { runs: 2, bytesBilled: TIB + 10, costUsd: ((TIB + 10) / TIB) * 6.25 },
    });
    expect(org.callers.map((c) => c.id).sort()).toEqual(['grant_x', 'key_a']);
    expect(org.brands.map((b) => b.id).sort()).toEqual(['brand_a1', 'brand_a2']);
    const other = await adminJson('history', 'totals', '--as', 'other@b.test');
    expect(other.brands).toMatchObject([{ id: 'brand_b1', windows: { 1: { runs: 1, bytesBilled: 2 * TIB, costUsd: 12.5 } } }]);
    expect((await adminJson('history', 'totals', '--as', 'u_brand')).brands.map((b) => b.id)).toEqual(['brand_a1']);
  });
});

describe('brand ids are not reused (issue 33)', () => {
  const requestIds = (list) => list.map((r) => r.requestId);
  it('brand create refuses an id a deleted brand left in the history; a re-created id shows none of the old rows', async () => {
    const now = Date.now();
    await rows(
      `INSERT INTO brands (id, org_id, name, dataset, created_at) VALUES ('brand_gone', 'org_b', 'Gone', NULL, 0);
       INSERT INTO query_log (id, request_id, principal_kind, principal_id, org_id, user_id, brand_id, query_id, period, sql, dry_run, transport,
                              outcome, bytes_processed, bytes_billed, row_count, duration_ms, created_at) VALUES
         ('ql_gone', 'req_gone', 'key', 'key_b', 'org_b', NULL, 'brand_gone', NULL, NULL, 'SELECT gone_secret', 0, 'rest', 'OK', 1, 1, 1, 5, ${now - 100});
       INSERT INTO feedback (id, request_id, principal_kind, principal_id, org_id, brand_id, summary, recent_queries, created_at)
         VALUES ('fb_gone', 'r_gone', 'key', 'key_b', 'org_b', 'brand_gone', 'Gone secret issue', '[]', ${now - 50})`,
    );
    expect(await adminJson('brand', 'delete', 'brand_gone')).toEqual({ id: 'brand_gone', deleted: true, cascaded: {} });
    const refused = await admin('brand', 'create', '--id', 'brand_gone', '--org', 'org_a', '--name', 'New');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('brand id brand_gone belonged to a deleted brand');
    expect(refused.stderr).toContain('brand ids are not reused');
    expect(await rows("SELECT count(*) AS n FROM brands WHERE id = 'brand_gone'")).toEqual([{ n: 0 }]);
    // An id in use is still "already exists"; an id never used is created.
    expect((await admin('brand', 'create', '--id', 'brand_a1', '--org', 'org_a', '--name', 'Dup')).stderr).toContain(
      'brand brand_a1 already exists',
    );

    // A database where the id was re-created anyway (before this rule, or by hand): org_a's administrators see none of
    // org_b's rows under it, in the CLI's history, totals and inbox alike; the operator still sees them.
    await rows(`INSERT INTO brands (id, org_id, name, dataset, created_at) VALUES ('brand_gone', 'org_a', 'New', NULL, 1)`);
    expect(requestIds((await adminJson('history', 'list', '--as', 'org@a.test')).runs)).not.toContain('req_gone');
    expect((await adminJson('history', 'totals', '--as', 'org@a.test')).brands.map((b) => b.id)).not.toContain('brand_gone');
    expect(ids((await adminJson('feedback', 'list', '--as', 'org@a.test')).reports)).not.toContain('fb_gone');
    expect(requestIds((await adminJson('history', 'list')).runs)).toContain('req_gone');
    await rows(
      `DELETE FROM feedback WHERE id = 'fb_gone'; DELETE FROM query_log WHERE id = 'ql_gone'; DELETE FROM brands WHERE id = 'brand_gone'`,
    );
  });
});
