// The data-issue inbox as a workflow (issue 37): a note without a status change, reopening a resolved report, an
// assignee, the filer reading its report's status and notes (REST and the MCP tool get_data_issue), and a run that
// reaches the query log after the report was filed still attached to it.
import { createExecutionContext, createMessageBatch, env, getQueueResult } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { DEMO_KEY_IDS } from '../src/seed/demo-tenants';
import type { QueryLogRow } from '../src/features/query/query-log';
import { FeedbackStatusSchema } from '../src/features/feedback/feedback.schemas';
import { page, signedIn } from './admin-client';
import { connectMcp, errorOf, okData } from './mcp-client';
import { inputValue, location, type TestBrowser } from './oauth-client';
import { api, expectError, postJson, seedDemo, TEST_ADMINS, TEST_KEYS } from './seed';

let org: TestBrowser;
let brand: TestBrowser;

beforeAll(async () => {
  await seedDemo();
  org = await signedIn(TEST_ADMINS.org, '198.51.100.81');
  brand = await signedIn(TEST_ADMINS.brand, '198.51.100.82');
  // Two sign-ins (PBKDF2 each) and the seed: seconds alone, several times that on a loaded machine.
}, 60_000);

async function file(summary: string, key: 'brand' | 'org' = 'brand'): Promise<string> {
  const res = await postJson('/v1/data/feedback', key, { summary, ...(key === 'org' ? { brandId: 'brand_acme' } : {}) });
  expect(res.status).toBe(200);
  return (res.body as { feedbackRef: string }).feedbackRef;
}

/** Posts one of the report page's forms as the browser would, from the page's own CSRF token. */
async function postForm(b: TestBrowser, ref: string, action: string, fields: Record<string, string>): Promise<Response> {
  const html = await page(b, `/admin/inbox/${ref}`);
  return b.post(`/admin/inbox/${ref}/${action}`, { csrf: inputValue(html, 'csrf'), ...fields });
}

async function filerView(ref: string, key: 'brand' | 'org' | 'other' = 'brand') {
  return api(`/v1/data/feedback/${ref}`, key);
}

describe('the inbox as a workflow', () => {
  it('adds a note without changing the status; the filer reads it', async () => {
    const ref = await file(`Note only ${crypto.randomUUID()}`);
    const res = await postForm(brand, ref, 'note', { from: 'open', note: 'Looking at the orders join' });
    expect(res.status).toBe(303);
    expect(location(res).search).toBe('?notice=note-added');
    const html = await page(brand, `/admin/inbox/${ref}`);
    expect(html).toContain('Looking at the orders join');
    expect(await env.DB.prepare('SELECT status FROM feedback WHERE id = ?').bind(ref).first<string>('status')).toBe('open');
    const view = await filerView(ref);
    expect(view.status).toBe(200);
    const body = FeedbackStatusSchema.parse(view.body);
    expect(body).toMatchObject({ feedbackRef: ref, status: 'open', assigned: false, brandId: 'brand_acme' });
    expect(body.updates).toEqual([{ at: expect.any(String), kind: 'note', from: 'open', to: 'open', note: 'Looking at the orders join' }]);
    // An empty note is refused and changes nothing.
    const empty = await postForm(brand, ref, 'note', { from: 'open', note: '  ' });
    expect(empty.status).toBe(400);
    expect(FeedbackStatusSchema.parse((await filerView(ref)).body).updates).toHaveLength(1);
  });

  it('reopens a resolved report with a note (and refuses to without one)', async () => {
    const ref = await file(`Reopen ${crypto.randomUUID()}`);
    expect((await postForm(org, ref, 'status', { from: 'open', status: 'resolved', note: 'Fixed upstream' })).status).toBe(303);
    const noNote = await postForm(org, ref, 'status', { from: 'resolved', status: 'open', note: '' });
    expect(noNote.status).toBe(400);
    expect(await noNote.text()).toContain('say why in a note to reopen the report');
    const reopened = await postForm(org, ref, 'status', { from: 'resolved', status: 'open', note: 'Still doubled on 3 May' });
    expect(reopened.status).toBe(303);
    expect(location(reopened).search).toBe('?notice=status-changed');
    const body = FeedbackStatusSchema.parse((await filerView(ref)).body);
    expect(body.status).toBe('open');
    expect(body.updates.map((u) => [u.kind, u.from, u.to, u.note])).toEqual([
      ['status', 'open', 'resolved', 'Fixed upstream'],
      ['status', 'resolved', 'open', 'Still doubled on 3 May'],
    ]);
  });

  it('assigns a report to an administrator who sees it, filters by assignee, and tells the filer only that it is taken', async () => {
    const ref = await file(`Assign ${crypto.randomUUID()}`);
    const html = await page(org, `/admin/inbox/${ref}`);
    const orgAdminId = await env.DB.prepare('SELECT id FROM users WHERE email = ?').bind(TEST_ADMINS.org.email).first<string>('id');
    const brandAdminId = await env.DB.prepare('SELECT id FROM users WHERE email = ?').bind(TEST_ADMINS.brand.email).first<string>('id');
    // Both administrators of brand_acme are offered.
    expect(html).toContain(`<option value="${orgAdminId}"`);
    expect(html).toContain(`<option value="${brandAdminId}"`);
    expect((await postForm(org, ref, 'assign', { assignee: brandAdminId ?? '' })).status).toBe(303);
    expect(await page(org, `/admin/inbox/${ref}`)).toContain(`Assigned to ${TEST_ADMINS.brand.email}`);
    // The brand administrator's "assigned to me" filter finds it; "nobody" does not.
    expect(await page(brand, `/admin/inbox?assignee=${brandAdminId}`)).toContain(ref);
    expect(await page(brand, '/admin/inbox?assignee=none')).not.toContain(ref);
    // Someone who does not administer the report cannot be assigned.
    expect((await postForm(org, ref, 'assign', { assignee: 'usr_nobody' })).status).toBe(400);
    const body = FeedbackStatusSchema.parse((await filerView(ref)).body);
    expect(body.assigned).toBe(true);
    expect(JSON.stringify(body)).not.toContain(TEST_ADMINS.brand.email);
    expect(body.updates).toEqual([]);
  });

  it('answers 404 FEEDBACK_NOT_FOUND to credentials that did not file the report, as for one that does not exist', async () => {
    const ref = await file(`Not yours ${crypto.randomUUID()}`);
    for (const key of ['org', 'other'] as const) expectError(await filerView(ref, key), 404, 'FEEDBACK_NOT_FOUND');
    expectError(await filerView('fb_doesnotexist'), 404, 'FEEDBACK_NOT_FOUND');
    expectError(await api('/v1/data/feedback/not-a-ref', 'brand'), 400, 'VALIDATION');
    expectError(await api(`/v1/data/feedback/${ref}`, null), 401, 'UNAUTHORIZED');
  });

  it('lets the assistant that filed a report read it through get_data_issue, and no one else', async () => {
    const ref = await file(`MCP filer ${crypto.randomUUID()}`);
    await postForm(org, ref, 'status', { from: 'open', status: 'acknowledged', note: 'On it' });
    const filer = await connectMcp(TEST_KEYS.brand);
    const other = await connectMcp(TEST_KEYS.other);
    try {
      const got = okData(await filer.callTool({ name: 'get_data_issue', arguments: { feedbackRef: ref } }), FeedbackStatusSchema);
      expect(got).toMatchObject({ feedbackRef: ref, status: 'acknowledged' });
      expect(got.updates.map((u) => u.note)).toEqual(['On it']);
      expect(errorOf(await other.callTool({ name: 'get_data_issue', arguments: { feedbackRef: ref } })).code).toBe('FEEDBACK_NOT_FOUND');
    } finally {
      await filer.close();
      await other.close();
    }
  });
});

describe('attachments of a report filed right after a query', () => {
  it('attaches a run from before filing that reached the log after it (the queue lag), once', async () => {
    const ref = await file(`Late run ${crypto.randomUUID()}`);
    const filed = await env.DB.prepare('SELECT created_at, recent_queries FROM feedback WHERE id = ?')
      .bind(ref)
      .first<{ created_at: number; recent_queries: string }>();
    const lateId = `ql_late_${crypto.randomUUID().slice(0, 8)}`;
    expect(filed?.recent_queries).not.toContain(lateId);
    // The run happened 0.9 s before filing; its row arrives through the query-log queue only now.
    const row: QueryLogRow = {
      kind: 'query-log',
      id: lateId,
      requestId: `req_${lateId}`,
      principalKind: 'key',
      principalId: DEMO_KEY_IDS.brand,
      orgId: 'org_demo',
      userId: null,
      brandId: 'brand_acme',
      queryId: null,
      period: null,
      sql: 'SELECT SUM(revenue) FROM `service-v1.acme.fact__orders` -- late',
      dryRun: 0,
      transport: 'rest',
      outcome: 'OK',
      bytesProcessed: 10,
      bytesBilled: 10,
      rowCount: 1,
      durationMs: 40,
      createdAt: (filed?.created_at ?? 0) - 900,
    };
    // A run after filing, and one on another brand, are not about this report.
    const after = { ...row, id: `${lateId}_after`, requestId: `req_${lateId}_after`, createdAt: (filed?.created_at ?? 0) + 50 };
    const elsewhere = { ...row, id: `${lateId}_globex`, requestId: `req_${lateId}_globex`, brandId: 'brand_globex' };
    const batch = createMessageBatch('warehouse-query-api-query-log', [
      { id: 'late-1', timestamp: new Date(), attempts: 1, body: row },
      { id: 'late-2', timestamp: new Date(), attempts: 1, body: after },
      { id: 'late-3', timestamp: new Date(), attempts: 1, body: elsewhere },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    await getQueueResult(batch, ctx);
    const html = await page(brand, `/admin/inbox/${ref}`);
    expect(html.split(`req_${lateId}`).length - 1).toBe(1);
    expect(html).not.toContain(`req_${lateId}_after`);
    expect(html).not.toContain(`req_${lateId}_globex`);
  });
});
