import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { FeedbackResponseSchema } from '../src/features/feedback/feedback.schemas';
import { DEMO_KEY_IDS } from '../src/seed/demo-tenants';
import { api, expectError, postJson, seedDemo } from './seed';

const HOUR = 60 * 60 * 1000;

beforeAll(async () => {
  await seedDemo();
  // The org key's audit trail: 25 runs in the last day (one per 30 min, newest first), one from two days ago, and
  // runs by the brand key that must never be attached to the org key's reports.
  const now = Date.now();
  const insert = env.DB.prepare(
    `INSERT INTO query_log (id, request_id, principal_kind, principal_id, brand_id, query_id, period, sql, dry_run, transport,
                            outcome, bytes_processed, bytes_billed, row_count, duration_ms, created_at)
     VALUES (?, ?, 'key', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const rows = [];
  for (let i = 0; i < 25; i++) {
    rows.push(
      insert.bind(
        `ql_org_${String(i).padStart(2, '0')}`,
        `req_org_${i}`,
        DEMO_KEY_IDS.org,
        'brand_acme',
        i === 0 ? 'rq_overview_kpis' : null,
        i === 0 ? JSON.stringify({ startDate: '2026-10-01', endDate: '2026-10-31' }) : null,
        `SELECT ${i}`,
        i === 1 ? 1 : 0,
        i === 2 ? 'mcp' : 'rest',
        i === 3 ? 'QUERY_FAILED' : 'OK',
        1000 + i,
        i === 1 ? 0 : 2000 + i,
        i,
        10 + i,
        now - (i + 1) * 30 * 60 * 1000,
      ),
    );
  }
  rows.push(
    insert.bind(
      'ql_org_old',
      'req_org_old',
      DEMO_KEY_IDS.org,
      'brand_acme',
      null,
      null,
      'SELECT old',
      0,
      'rest',
      'OK',
      1,
      1,
      1,
      1,
      now - 48 * HOUR,
    ),
  );
  rows.push(
    insert.bind(
      'ql_brand_0',
      'req_brand_0',
      DEMO_KEY_IDS.brand,
      'brand_acme',
      null,
      null,
      'SELECT brand',
      0,
      'rest',
      'OK',
      1,
      1,
      1,
      1,
      now - HOUR,
    ),
  );
  // The org key's runs on its other brand, newer than any Acme run: a report about Acme must not attach them.
  for (let i = 0; i < 3; i++) {
    rows.push(
      insert.bind(
        `ql_globex_${i}`,
        `req_globex_${i}`,
        DEMO_KEY_IDS.org,
        'brand_globex',
        null,
        null,
        `SELECT g${i}`,
        0,
        'rest',
        'OK',
        1,
        1,
        1,
        1,
        now - (i + 1) * 60 * 1000,
      ),
    );
  }
  await env.DB.batch(rows);
});

interface FeedbackRow {
  id: string;
  request_id: string;
  principal_kind: string;
  principal_id: string;
  org_id: string | null;
  brand_id: string | null;
  summary: string;
  expected: string | null;
  observed: string | null;
  severity: string | null;
  transcript: string | null;
  recent_queries: string;
  created_at: number;
}

async function stored(ref: string) {
  const row = await env.DB.prepare('SELECT * FROM feedback WHERE id = ?').bind(ref).first<FeedbackRow>();
  if (!row) throw new Error(`feedback ${ref} was not stored`);
  return row;
}

async function feedbackCount() {
  return (await env.DB.prepare('SELECT count(*) AS n FROM feedback').first<{ n: number }>())?.n ?? -1;
}

describe('POST /v1/data/feedback', () => {
  it('stores a full report with its reference, request id and the last 20 queries of the key from the last 24 h', async () => {
    const before = Date.now();
    const transcript = [
      { role: 'user', content: 'What was revenue in October?' },
      { role: 'tool', content: '{"rows":[{"revenue":2}]}' },
      { role: 'assistant', content: 'Revenue was 2.' },
    ];
    const res = await postJson('/v1/data/feedback', 'org', {
      summary: 'October revenue looks doubled',
      brandId: 'brand_acme',
      expected: 'about 1',
      observed: '2',
      severity: 'high',
      transcript,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(Object.keys(res.body ?? {})).toEqual(['feedbackRef', 'attached']);
    const { feedbackRef } = FeedbackResponseSchema.parse(res.body);
    expect(feedbackRef).toMatch(/^fb_[0-9a-f]{20}$/);

    const row = await stored(feedbackRef);
    expect(row).toMatchObject({
      request_id: res.headers.get('x-request-id'),
      principal_kind: 'key',
      principal_id: DEMO_KEY_IDS.org,
      org_id: 'org_demo',
      brand_id: 'brand_acme',
      summary: 'October revenue looks doubled',
      expected: 'about 1',
      observed: '2',
      severity: 'high',
    });
    expect(JSON.parse(row.transcript ?? 'null')).toEqual(transcript);
    expect(row.created_at).toBeGreaterThanOrEqual(before);

    const recent = JSON.parse(row.recent_queries);
    expect(recent).toHaveLength(20);
    expect(recent.map((q: { requestId: string }) => q.requestId)).toEqual(Array.from({ length: 20 }, (_, i) => `req_org_${i}`));
    expect(recent[0]).toEqual({
      id: 'ql_org_00',
      requestId: 'req_org_0',
      brandId: 'brand_acme',
      queryId: 'rq_overview_kpis',
      period: { startDate: '2026-10-01', endDate: '2026-10-31' },
      sql: 'SELECT 0',
      dryRun: false,
      transport: 'rest',
      outcome: 'OK',
      bytesProcessed: 1000,
      bytesBilled: 2000,
      rowCount: 0,
      durationMs: 10,
      createdAt: expect.any(Number),
    });
    expect(recent[1]).toMatchObject({ dryRun: true, bytesBilled: 0, queryId: null, period: null });
    expect(recent[2]).toMatchObject({ transport: 'mcp' });
    expect(recent[3]).toMatchObject({ outcome: 'QUERY_FAILED' });
  });

  it("attaches only the calling key's own queries (none older than 24 h)", async () => {
    const res = await postJson('/v1/data/feedback', 'brand', { summary: 'x' });
    const row = await stored(FeedbackResponseSchema.parse(res.body).feedbackRef);
    expect(JSON.parse(row.recent_queries).map((q: { requestId: string }) => q.requestId)).toEqual(['req_brand_0']);
    // A single-brand key defaults to its brand.
    expect(row).toMatchObject({ brand_id: 'brand_acme', org_id: 'org_demo', principal_id: DEMO_KEY_IDS.brand });
  });

  it('stores an empty audit trail for a key that ran nothing', async () => {
    const res = await postJson('/v1/data/feedback', 'other', { summary: 'Umbrella totals look low', brandId: 'brand_umbrella' });
    const row = await stored(FeedbackResponseSchema.parse(res.body).feedbackRef);
    expect(JSON.parse(row.recent_queries)).toEqual([]);
    expect(row).toMatchObject({
      brand_id: 'brand_umbrella',
      org_id: 'org_other',
      expected: null,
      observed: null,
      severity: null,
      transcript: null,
    });
  });

  it('files a general, organization-wide report when an org key omits brandId', async () => {
    const res = await postJson('/v1/data/feedback', 'org', { summary: 'Every brand is missing yesterday', severity: 'medium' });
    expect(res.status).toBe(200);
    const row = await stored(FeedbackResponseSchema.parse(res.body).feedbackRef);
    expect(row).toMatchObject({ brand_id: null, org_id: 'org_demo', severity: 'medium' });
    // A general report is about every brand: the key's last 20 runs on any of them, newest first.
    const recent = JSON.parse(row.recent_queries).map((q: { requestId: string }) => q.requestId);
    expect(recent).toEqual([...['req_globex_0', 'req_globex_1', 'req_globex_2'], ...Array.from({ length: 17 }, (_, i) => `req_org_${i}`)]);
  });

  it("an org key's report about one brand attaches that brand's runs only", async () => {
    const res = await postJson('/v1/data/feedback', 'org', { summary: 'Globex store counts look off', brandId: 'brand_globex' });
    const row = await stored(FeedbackResponseSchema.parse(res.body).feedbackRef);
    expect(row).toMatchObject({ brand_id: 'brand_globex' });
    const recent: { requestId: string; brandId: string }[] = JSON.parse(row.recent_queries);
    expect(recent.map((q) => q.requestId)).toEqual(['req_globex_0', 'req_globex_1', 'req_globex_2']);
    expect(new Set(recent.map((q) => q.brandId))).toEqual(new Set(['brand_globex']));
    // The answer says what was attached: the same runs, by request id and time, and no transcript.
    const { attached } = FeedbackResponseSchema.parse(res.body);
    expect(attached?.turns).toBe(0);
    expect(attached?.queries.map((q) => q.requestId)).toEqual(['req_globex_0', 'req_globex_1', 'req_globex_2']);
    for (const q of attached?.queries ?? [])
      expect(q).toEqual({ requestId: q.requestId, at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/), queryId: null, outcome: 'OK' });
  });

  it('accepts input exactly at the documented limits', async () => {
    const res = await postJson('/v1/data/feedback', 'brand', {
      summary: 's'.repeat(2000),
      expected: 'e'.repeat(2000),
      observed: 'o'.repeat(2000),
      transcript: Array.from({ length: 100 }, (_, i) => ({ role: 'user', content: i === 0 ? 'x'.repeat(200 * 1024 - 99) : 'y' })),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const row = await stored(FeedbackResponseSchema.parse(res.body).feedbackRef);
    expect(row.summary).toHaveLength(2000);
    expect(JSON.parse(row.transcript ?? '[]')).toHaveLength(100);
  });

  describe('400 VALIDATION with a message naming the field, and nothing stored', () => {
    const longTurns = Array.from({ length: 3 }, () => ({ role: 'tool', content: 'é'.repeat(40 * 1024) }));
    it.each([
      ['missing summary', { severity: 'low' }, /summary/],
      ['empty summary', { summary: '' }, /summary must not be empty/],
      ['summary too long', { summary: 's'.repeat(2001) }, /summary must be at most 2000 characters/],
      ['expected too long', { summary: 'x', expected: 'e'.repeat(2001) }, /expected must be at most 2000/],
      ['observed too long', { summary: 'x', observed: 'o'.repeat(2001) }, /observed must be at most 2000/],
      ['bad severity', { summary: 'x', severity: 'critical' }, /severity/],
      ['bad role', { summary: 'x', transcript: [{ role: 'system', content: 'hi' }] }, /transcript\.0\.role/],
      ['turn without content', { summary: 'x', transcript: [{ role: 'user' }] }, /transcript\.0\.content/],
      ['unknown turn property', { summary: 'x', transcript: [{ role: 'user', content: 'a', at: 1 }] }, /transcript\.0/],
      [
        'too many turns',
        { summary: 'x', transcript: Array.from({ length: 101 }, () => ({ role: 'user', content: 'a' })) },
        /at most 100 turns/,
      ],
      ['transcript over 200 KiB of UTF-8', { summary: 'x', transcript: longTurns }, /at most 204800 bytes/],
      ['unknown top-level property', { summary: 'x', reporter: 'me' }, /reporter/],
      ['summary not a string', { summary: 42 }, /summary/],
      ['empty brandId', { summary: 'x', brandId: '' }, /brandId/],
      ['array body', [{ summary: 'x' }], /body/],
    ])('%s', async (_name, body, message) => {
      const before = await feedbackCount();
      const err = expectError(await postJson('/v1/data/feedback', 'org', body), 400, 'VALIDATION');
      expect(err.message).toMatch(message);
      expect(err.details).toMatchObject({ in: 'body', issues: expect.any(Array) });
      expect(await feedbackCount()).toBe(before);
    });
  });

  it('403 FORBIDDEN_BRAND for a brand outside the key, nothing stored', async () => {
    const before = await feedbackCount();
    for (const [key, brandId] of [
      ['org', 'brand_umbrella'],
      ['brand', 'brand_globex'],
      ['other', 'brand_acme'],
    ] as const) {
      const err = expectError(await postJson('/v1/data/feedback', key, { summary: 'x', brandId }), 403, 'FORBIDDEN_BRAND');
      expect(err.message).toContain(brandId);
    }
    expect(await feedbackCount()).toBe(before);
  });

  it('401 without a valid key, before the body is looked at', async () => {
    expectError(await postJson('/v1/data/feedback', null, { summary: 'x' }), 401, 'UNAUTHORIZED');
    expectError(await postJson('/v1/data/feedback', null, {}), 401, 'UNAUTHORIZED');
  });

  it('415 for a body that is not JSON, 400 for malformed JSON, 413 above 1 MiB', async () => {
    const wrongType = await api('/v1/data/feedback', 'org', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'summary=x',
    });
    expectError(wrongType, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const malformed = await api('/v1/data/feedback', 'org', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"summary":',
    });
    expectError(malformed, 400, 'VALIDATION');
    const huge = await postJson('/v1/data/feedback', 'org', { summary: 'x', observed: 'o'.repeat(1024 * 1024) });
    expectError(huge, 413, 'PAYLOAD_TOO_LARGE');
  });
});
