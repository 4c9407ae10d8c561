// The data team's console pages: the data-issue inbox (list, filters, detail, status changes) and the query history
// (runs, filters, totals, CSV), each seen by an org administrator, a brand administrator and another org's
// administrator. Reports are filed through REST and MCP (an assistant connection), runs logged by real runs and by
// rows written straight to query_log for the totals.
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTotals, TOTAL_WINDOWS } from '../src/features/query-history/history';
import { DEMO_KEY_IDS, DEMO_USER_IDS } from '../src/seed/demo-tenants';
import { page, signedIn } from './admin-client';
import { addUser, connectAssistant, inputValue, location, mcpClient, type TestBrowser } from './oauth-client';
import { expectError, postJson, seedDemo, TEST_ADMINS } from './seed';

const OTHER_ADMIN = { email: 'other-admin@other.test', password: 'other-admin-password-1' };
const DAY = 24 * 60 * 60 * 1000;
const TIB = 1024 ** 4;

/** Report ids by name. */
const reports: Record<string, string> = {};
let browsers: { org: TestBrowser; brand: TestBrowser; other: TestBrowser };
let grantUser: { grantId: string; userId: string };

async function file(key: 'org' | 'brand' | 'other', body: Record<string, unknown>): Promise<string> {
  const res = await postJson('/v1/data/feedback', key, body);
  expect(res.status).toBe(200);
  return (res.body as { feedbackRef: string }).feedbackRef;
}

beforeAll(async () => {
  await seedDemo();
  await addUser('user_other_admin', OTHER_ADMIN.email, OTHER_ADMIN.password);
  await env.DB.prepare(
    `INSERT INTO memberships (user_id, org_id, brand_id, role, created_at) VALUES ('user_other_admin', 'org_other', NULL, 'admin', 0)`,
  ).run();

  // Runs logged before filing, so the reports attach them.
  const now = Date.now();
  const insert = env.DB.prepare(
    `INSERT INTO query_log (id, request_id, principal_kind, principal_id, org_id, user_id, brand_id, query_id, period, sql, dry_run,
                            transport, outcome, bytes_processed, bytes_billed, row_count, duration_ms, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const rows: [
    string,
    string,
    'key' | 'oauth',
    string,
    string | null,
    string | null,
    string | null,
    string | null,
    string,
    string,
    number,
    number,
    number,
  ][] = [
    // id, request, kind, principal, org, user, brand, query, sql, outcome, bytes billed, rows, age (ms)
    [
      'ql_acme_1',
      'req_acme_1',
      'key',
      DEMO_KEY_IDS.brand,
      'org_demo',
      null,
      'brand_acme',
      null,
      'SELECT "a, b"\nFROM orders',
      'OK',
      3 * TIB,
      10,
      60_000,
    ],
    [
      'ql_acme_2',
      'req_acme_2',
      'key',
      DEMO_KEY_IDS.brand,
      'org_demo',
      null,
      'brand_acme',
      'rq_overview_kpis',
      'SELECT 2',
      'QUERY_FAILED',
      0,
      0,
      3 * DAY,
    ],
    [
      'ql_globex_1',
      'req_globex_1',
      'key',
      DEMO_KEY_IDS.org,
      'org_demo',
      null,
      'brand_globex',
      null,
      'SELECT globex',
      'OK',
      TIB / 2,
      5,
      120_000,
    ],
    [
      'ql_globex_old',
      'req_globex_old',
      'key',
      DEMO_KEY_IDS.org,
      'org_demo',
      null,
      'brand_globex',
      null,
      'SELECT old',
      'OK',
      1000,
      1,
      20 * DAY,
    ],
    [
      'ql_ancient',
      'req_ancient',
      'key',
      DEMO_KEY_IDS.org,
      'org_demo',
      null,
      'brand_globex',
      null,
      'SELECT ancient',
      'OK',
      999,
      1,
      40 * DAY,
    ],
    ['ql_nobrand', 'req_nobrand', 'key', DEMO_KEY_IDS.org, 'org_demo', null, null, null, 'SELECT nobrand', 'VALIDATION', 0, 0, 30_000],
    [
      'ql_umbrella',
      'req_umbrella',
      'key',
      DEMO_KEY_IDS.other,
      'org_other',
      null,
      'brand_umbrella',
      null,
      'SELECT umbrella_secret',
      'OK',
      2 * TIB,
      3,
      90_000,
    ],
  ];
  await env.DB.batch(
    rows.map(([id, req, kind, principal, org, user, brand, query, sql, outcome, billed, count, age]) =>
      insert.bind(
        id,
        req,
        kind,
        principal,
        org,
        user,
        brand,
        query,
        query ? JSON.stringify({ startDate: '2026-10-01', endDate: '2026-10-31' }) : null,
        sql,
        'rest',
        outcome,
        billed,
        billed,
        count,
        25,
        now - age,
      ),
    ),
  );

  reports.acme = await file('brand', {
    summary: 'Acme revenue doubled in October',
    severity: 'medium',
    expected: 'about 1.2M',
    observed: '2.4M',
    transcript: [
      { role: 'user', content: 'What was October revenue?' },
      { role: 'assistant', content: 'October revenue was 2.4M <b>bold</b>.' },
    ],
  });
  reports.globex = await file('org', { summary: 'Globex orders missing', brandId: 'brand_globex', severity: 'high' });
  reports.orgWide = await file('org', { summary: 'Every brand looks a day late', severity: 'low' });
  reports.umbrella = await file('other', { summary: 'Umbrella secret issue', severity: 'high' });

  // An assistant connection of the brand administrator runs a query and files a report through MCP.
  const { tokens } = await connectAssistant(TEST_ADMINS.brand);
  const client = await mcpClient(tokens.access_token);
  const ran = await client.callTool({ name: 'run_query', arguments: { brandId: 'brand_acme', sql: 'SELECT 1 AS one' } });
  expect(ran.isError ?? false).toBe(false);
  const filed = await client.callTool({
    name: 'report_data_issue',
    arguments: { summary: 'Assistant sees odd totals', brandId: 'brand_acme', severity: 'low' },
  });
  await client.close();
  reports.assistant = (filed.structuredContent as { feedbackRef: string }).feedbackRef;
  const row = await env.DB.prepare('SELECT principal_id, user_id FROM feedback WHERE id = ?')
    .bind(reports.assistant)
    .first<{ principal_id: string; user_id: string }>();
  grantUser = { grantId: row!.principal_id, userId: row!.user_id };

  browsers = {
    org: await signedIn(TEST_ADMINS.org),
    brand: await signedIn(TEST_ADMINS.brand, '198.51.100.51'),
    other: await signedIn(OTHER_ADMIN, '198.51.100.52'),
  };
}, 60_000);

const summaries = [
  'Acme revenue doubled in October',
  'Globex orders missing',
  'Every brand looks a day late',
  'Umbrella secret issue',
  'Assistant sees odd totals',
];
const shown = (html: string) => summaries.filter((s) => html.includes(s));

describe('data-issue inbox', () => {
  it('shows each administrator only the reports of what they administer', async () => {
    expect(shown(await page(browsers.org, '/admin/inbox')).sort()).toEqual(
      ['Acme revenue doubled in October', 'Assistant sees odd totals', 'Every brand looks a day late', 'Globex orders missing'].sort(),
    );
    expect(shown(await page(browsers.brand, '/admin/inbox')).sort()).toEqual(
      ['Acme revenue doubled in October', 'Assistant sees odd totals'].sort(),
    );
    expect(shown(await page(browsers.other, '/admin/inbox'))).toEqual(['Umbrella secret issue']);
    // A report outside one's reach is not found, not shown.
    for (const [b, id] of [
      [browsers.org, reports.umbrella],
      [browsers.brand, reports.globex],
      [browsers.other, reports.acme],
    ] as const) {
      const res = await b.get(`/admin/inbox/${id}`);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toMatch(/Umbrella secret|Globex orders|Acme revenue/);
    }
  });

  it('filters by brand, severity, status, filer (key, connection, user) and date', async () => {
    expect(shown(await page(browsers.org, '/admin/inbox?severity=high'))).toEqual(['Globex orders missing']);
    expect(shown(await page(browsers.org, '/admin/inbox?brand=brand_acme')).sort()).toEqual(
      ['Acme revenue doubled in October', 'Assistant sees odd totals'].sort(),
    );
    expect(shown(await page(browsers.org, `/admin/inbox?key=${DEMO_KEY_IDS.org}`)).sort()).toEqual(
      ['Every brand looks a day late', 'Globex orders missing'].sort(),
    );
    expect(shown(await page(browsers.org, `/admin/inbox?connection=${grantUser.grantId}`))).toEqual(['Assistant sees odd totals']);
    expect(shown(await page(browsers.org, `/admin/inbox?user=${DEMO_USER_IDS.brand}`))).toEqual(['Assistant sees odd totals']);
    const today = new Date().toISOString().slice(0, 10);
    expect(shown(await page(browsers.org, `/admin/inbox?from=${today}&to=${today}`))).toHaveLength(4);
    expect(shown(await page(browsers.org, '/admin/inbox?to=2020-01-01'))).toEqual([]);
    expect(shown(await page(browsers.org, '/admin/inbox?status=resolved&brand=brand_globex'))).toEqual([]);
    // The filer is named: the key, or the assistant and its user.
    const html = await page(browsers.org, `/admin/inbox?connection=${grantUser.grantId}`);
    expect(html).toContain(TEST_ADMINS.brand.email);
    const bad = await browsers.org.get('/admin/inbox?from=yesterday');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('from must be a date YYYY-MM-DD');
  });

  it('shows a report: expected and observed, the transcript as a conversation, the attached queries linked to the history', async () => {
    const html = await page(browsers.org, `/admin/inbox/${reports.acme}`);
    expect(html).toContain('about 1.2M');
    expect(html).toContain('2.4M');
    expect(html).toMatch(
      /<li class="turn turn-user"><span class="who">User<\/span><div class="said">What was October revenue\?<\/div><\/li>/,
    );
    // Transcript text is text: markup in it is escaped, never rendered.
    expect(html).toContain('2.4M &lt;b&gt;bold&lt;/b&gt;.');
    expect(html).toContain('SELECT &quot;a, b&quot;\nFROM orders');
    expect(html).toContain('href="/admin/history?requestId=req_acme_1"');
    // The brand key's report attaches only the brand key's runs.
    expect(html).not.toContain('req_globex_1');
  });

  it('moves a report open -> acknowledged -> resolved with a note, recording who and when; refusals change nothing', async () => {
    const path = `/admin/inbox/${reports.globex}`;
    const csrf = inputValue(await page(browsers.org, path), 'csrf');
    // Resolving needs a note.
    const noNote = await browsers.org.post(`${path}/status`, { csrf, from: 'open', status: 'resolved', note: '' });
    expect(noNote.status).toBe(400);
    expect(await noNote.text()).toContain('say why in a note to mark the report resolved');
    // A brand administrator cannot touch another brand's report; a missing CSRF token is refused.
    expect(
      (
        await browsers.brand.post(`${path}/status`, {
          csrf: inputValue(await page(browsers.brand, '/admin/inbox'), 'csrf'),
          from: 'open',
          status: 'acknowledged',
        })
      ).status,
    ).toBe(404);
    expect((await browsers.org.post(`${path}/status`, { from: 'open', status: 'acknowledged' })).status).toBe(403);
    expect(await env.DB.prepare('SELECT status FROM feedback WHERE id = ?').bind(reports.globex).first('status')).toBe('open');

    const ack = await browsers.org.post(`${path}/status`, { csrf, from: 'open', status: 'acknowledged', note: '' });
    expect(ack.status).toBe(303);
    expect(location(ack).search).toBe('?notice=status-changed');
    // A form from before that change (still saying "open") is refused with the current state.
    const stale = await browsers.org.post(`${path}/status`, { csrf, from: 'open', status: 'dismissed', note: 'dup' });
    expect(stale.status).toBe(409);
    const resolved = await browsers.org.post(`${path}/status`, {
      csrf,
      from: 'acknowledged',
      status: 'resolved',
      note: 'Late load fixed; reran the job.',
    });
    expect(resolved.status).toBe(303);

    const html = await page(browsers.org, path);
    expect(html).toContain('<span class="st st-resolved">Resolved</span>');
    expect(html).toContain('Late load fixed; reran the job.');
    // Final unless reopened (with a note): test/inbox-workflow.test.ts.
    expect(html).toContain('<option value="open">Reopen</option>');
    const { results } = await env.DB.prepare(
      'SELECT from_status, to_status, note, actor_kind, actor_id, actor_name FROM feedback_status_changes WHERE feedback_id = ? ORDER BY created_at, id',
    )
      .bind(reports.globex)
      .all();
    expect(results).toEqual([
      {
        from_status: 'open',
        to_status: 'acknowledged',
        note: null,
        actor_kind: 'user',
        actor_id: DEMO_USER_IDS.org,
        actor_name: TEST_ADMINS.org.email,
      },
      {
        from_status: 'acknowledged',
        to_status: 'resolved',
        note: 'Late load fixed; reran the job.',
        actor_kind: 'user',
        actor_id: DEMO_USER_IDS.org,
        actor_name: TEST_ADMINS.org.email,
      },
    ]);
    expect(shown(await page(browsers.org, '/admin/inbox?status=resolved'))).toEqual(['Globex orders missing']);
    // Final: nothing further is accepted.
    const again = await browsers.org.post(`${path}/status`, { csrf, from: 'resolved', status: 'dismissed', note: 'x' });
    expect(again.status).toBe(400);
  });
});

describe('query history', () => {
  const runsShown = (html: string) =>
    ['req_acme_1', 'req_acme_2', 'req_globex_1', 'req_globex_old', 'req_ancient', 'req_nobrand', 'req_umbrella'].filter((r) =>
      html.includes(`request ${r}<`),
    );

  it('shows each administrator only the runs of what they administer', async () => {
    expect(runsShown(await page(browsers.org, '/admin/history')).sort()).toEqual(
      ['req_acme_1', 'req_acme_2', 'req_ancient', 'req_globex_1', 'req_globex_old', 'req_nobrand'].sort(),
    );
    expect(runsShown(await page(browsers.brand, '/admin/history')).sort()).toEqual(['req_acme_1', 'req_acme_2']);
    const other = await page(browsers.other, '/admin/history');
    expect(runsShown(other)).toEqual(['req_umbrella']);
    expect(other).not.toContain('SELECT 1 AS one');
    expect(await page(browsers.org, '/admin/history')).not.toContain('umbrella_secret');
  });

  it("names each run's brand (its id in the tooltip), and says when a run had none", async () => {
    const html = await page(browsers.org, '/admin/history?requestId=req_acme_1');
    expect(html).toMatch(/<td data-label="Brand"><span title="brand_acme">Acme Outdoor<\/span><\/td>/);
    const none = await page(browsers.org, '/admin/history?requestId=req_nobrand');
    expect(none).toMatch(/<td data-label="Brand"><span class="muted">none<\/span><\/td>/);
  });

  it('records a real run with its transport, connection and user, and filters by them', async () => {
    const html = await page(browsers.org, `/admin/history?connection=${grantUser.grantId}&outcome=ok`);
    expect(html).toContain('SELECT 1 AS one');
    expect(html).toContain('MCP');
    expect(html).toContain(TEST_ADMINS.brand.email);
    const row = await env.DB.prepare("SELECT transport, user_id, org_id, duration_ms FROM query_log WHERE sql = 'SELECT 1 AS one'").first();
    expect(row).toMatchObject({ transport: 'mcp', user_id: DEMO_USER_IDS.brand, org_id: 'org_demo' });
    expect(runsShown(await page(browsers.org, `/admin/history?user=${DEMO_USER_IDS.brand}`))).toEqual([]);
    expect(runsShown(await page(browsers.org, '/admin/history?outcome=error')).sort()).toEqual(['req_acme_2', 'req_nobrand']);
    expect(runsShown(await page(browsers.org, '/admin/history?outcome=QUERY_FAILED'))).toEqual(['req_acme_2']);
    expect(runsShown(await page(browsers.org, '/admin/history?query=rq_overview_kpis'))).toEqual(['req_acme_2']);
    expect(runsShown(await page(browsers.org, `/admin/history?key=${DEMO_KEY_IDS.brand}`)).sort()).toEqual(['req_acme_1', 'req_acme_2']);
    expect(runsShown(await page(browsers.org, '/admin/history?brand=brand_globex')).sort()).toEqual([
      'req_ancient',
      'req_globex_1',
      'req_globex_old',
    ]);
    expect(runsShown(await page(browsers.org, '/admin/history?requestId=req_acme_1'))).toEqual(['req_acme_1']);
    // A brand administrator's filter cannot reach past their brand.
    expect(runsShown(await page(browsers.brand, '/admin/history?brand=brand_globex'))).toEqual([]);
  });

  it('shows outcome, rows, bytes billed, duration and the estimated cost at ON_DEMAND_USD_PER_TIB', async () => {
    const html = await page(browsers.org, '/admin/history?requestId=req_acme_1');
    // 3 TiB at $6.25 per TiB.
    expect(html).toContain('$18.75');
    expect(html).toContain('3 TiB');
    expect(html).toContain('25 ms');
  });

  it('totals per key, connection and brand over 1, 7 and 30 days equal the sums of the log rows', async () => {
    const now = Date.now();
    const reach = { orgIds: ['org_demo'], brandIds: ['brand_acme', 'brand_globex'] };
    const totals = await loadTotals(env, reach, now);
    const { results } = await env.DB.prepare(
      'SELECT principal_kind, principal_id, brand_id, org_id, bytes_billed, created_at FROM query_log',
    ).all<{
      principal_kind: string;
      principal_id: string;
      brand_id: string | null;
      org_id: string | null;
      bytes_billed: number | null;
      created_at: number;
    }>();
    const visible = results.filter((r) =>
      r.brand_id !== null ? reach.brandIds.includes(r.brand_id) : reach.orgIds.includes(r.org_id ?? ''),
    );
    for (const d of TOTAL_WINDOWS) {
      const inWindow = visible.filter((r) => r.created_at > now - d * DAY && r.created_at <= now);
      const sum = (rows: typeof inWindow) => ({ runs: rows.length, bytesBilled: rows.reduce((n, r) => n + (r.bytes_billed ?? 0), 0) });
      for (const t of totals.callers) {
        const expected = sum(
          inWindow.filter((r) => (r.principal_kind === 'key' ? 'key' : 'connection') === t.kind && r.principal_id === t.id),
        );
        expect({ who: t.id, d, runs: t.windows[d].runs, bytes: t.windows[d].bytesBilled }).toEqual({
          who: t.id,
          d,
          runs: expected.runs,
          bytes: expected.bytesBilled,
        });
        expect(t.windows[d].costUsd).toBeCloseTo((expected.bytesBilled / TIB) * 6.25, 9);
      }
      for (const t of totals.brands) {
        const expected = sum(inWindow.filter((r) => r.brand_id === t.id));
        expect({ brand: t.id, d, runs: t.windows[d].runs, bytes: t.windows[d].bytesBilled }).toEqual({
          brand: t.id,
          d,
          runs: expected.runs,
          bytes: expected.bytesBilled,
        });
      }
      // Every visible run of the window is in exactly one caller row and one brand row.
      expect(totals.callers.reduce((n, t) => n + t.windows[d].runs, 0)).toBe(inWindow.length);
      expect(totals.brands.reduce((n, t) => n + t.windows[d].runs, 0)).toBe(inWindow.length);
    }
    expect(totals.brands.map((t) => t.id)).not.toContain('brand_umbrella');
    const html = await page(browsers.org, '/admin/history');
    expect(html).toContain('Per API key and assistant connection');
    expect(html).toContain('Per brand');
  });

  it('exports the matching runs as CSV, only the visible ones, with SQL quoted', async () => {
    const res = await browsers.org.get('/admin/history.csv?brand=brand_acme');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="query-history-\d{4}-\d{2}-\d{2}\.csv"$/);
    const text = await res.text();
    const [header] = text.split('\r\n');
    expect(header).toBe(
      'created_at,request_id,transport,caller_kind,caller_id,caller_name,user_email,brand_id,query_id,period_start,period_end,dry_run,outcome,error_code,error_message,rows,bytes_billed,bytes_processed,duration_ms,cost_usd,sql',
    );
    expect(text).toContain('"SELECT ""a, b""\nFROM orders"');
    expect(text).toContain(',18.750000,');
    const acmeRuns = await env.DB.prepare("SELECT COUNT(*) AS n FROM query_log WHERE brand_id = 'brand_acme'").first<number>('n');
    expect(text.split('\r\n').filter(Boolean)).toHaveLength(1 + (acmeRuns ?? 0));
    const other = await (await browsers.other.get('/admin/history.csv')).text();
    expect(other).toContain('req_umbrella');
    expect(other).not.toContain('req_acme_1');
  });
});

describe('history keeps the reason and names the assistant', () => {
  it("keeps the warehouse's message of a failed run in the log, the page, the CSV and the CLI's statement", async () => {
    const err = expectError(
      await postJson('/v1/data/query', 'brand', { sql: 'SELECT order_total FROM `service-v1.acme.fact__orders`' }),
      400,
      'QUERY_FAILED',
    );
    expect(err.message).toMatch(/Unrecognized name: order_total/);
    const row = await env.DB.prepare('SELECT outcome, error_message, client_name FROM query_log WHERE request_id = ?')
      .bind(err.requestId)
      .first();
    // The message the caller got, word for word (the contract's project, never the deployment's).
    expect(row).toEqual({ outcome: 'QUERY_FAILED', error_message: err.message, client_name: null });
    const html = await page(browsers.org, `/admin/history?requestId=${err.requestId}`);
    expect(html).toContain('<span class="blocked">QUERY_FAILED</span>');
    expect(html).toContain(`<div class="error-message">Unrecognized name: order_total`);
    const csv = await (await browsers.org.get(`/admin/history.csv?requestId=${err.requestId}`)).text();
    // error_code then error_message (cells may be quoted: the CSV quotes every text cell).
    expect(csv.split('\r\n')[1]).toMatch(/,"?QUERY_FAILED"?,"?QUERY_FAILED"?,"?Unrecognized name: order_total/);
  });

  it('a refusal keeps its message; a successful run keeps none', async () => {
    const refused = expectError(await postJson('/v1/data/query', 'brand', { sql: 'DROP TABLE x' }), 400, 'INVALID_SQL');
    const ok = await postJson('/v1/data/query', 'brand', { sql: 'SELECT 1 AS one' });
    expect(ok.status).toBe(200);
    const rows = await env.DB.prepare('SELECT request_id, error_message FROM query_log WHERE request_id IN (?, ?)')
      .bind(refused.requestId, ok.headers.get('x-request-id'))
      .all<{ request_id: string; error_message: string | null }>();
    expect(Object.fromEntries(rows.results.map((r) => [r.request_id, r.error_message]))).toEqual({
      [refused.requestId]: refused.message,
      [ok.headers.get('x-request-id')!]: null,
    });
  });

  it("names an assistant's runs and reports as the Assistants page does: the assistant, for its user", async () => {
    const logged = await env.DB.prepare("SELECT DISTINCT client_name FROM query_log WHERE principal_kind = 'oauth' AND principal_id = ?")
      .bind(grantUser.grantId)
      .all<{ client_name: string | null }>();
    expect(logged.results).toEqual([{ client_name: 'Test Assistant' }]);
    const history = await page(browsers.org, `/admin/history?connection=${grantUser.grantId}`);
    expect(history).toMatch(new RegExp(`>Test Assistant</a><div class="muted">for <a href="[^"]+">${TEST_ADMINS.brand.email}</a>`));
    expect(history).not.toContain(`${grantUser.grantId.slice(0, 12)}…`);
    const inbox = await page(browsers.org, `/admin/inbox?connection=${grantUser.grantId}`);
    expect(inbox).toMatch(new RegExp(`>Test Assistant</a><div class="muted">for <a href="[^"]+">${TEST_ADMINS.brand.email}</a>`));
  });

  it('offers the key, connection and user filters as pickers of names, and counts "1 run"', async () => {
    for (const path of ['/admin/history', '/admin/inbox']) {
      const html = await page(browsers.org, path);
      expect(html).toMatch(/<select id="filter-key" name="key">/);
      expect(html).toMatch(
        new RegExp(
          `<select id="filter-connection" name="connection">.*<option value="${grantUser.grantId}">Test Assistant, for ${TEST_ADMINS.brand.email}</option>`,
          's',
        ),
      );
      expect(html).toMatch(
        new RegExp(
          `<select id="filter-user" name="user">.*<option value="${DEMO_USER_IDS.brand}">${TEST_ADMINS.brand.email}</option>`,
          's',
        ),
      );
      expect(html).not.toContain('placeholder="connection id"');
    }
    // Another org's administrator is not offered this org's connections.
    expect(await page(browsers.other, '/admin/history')).not.toContain(grantUser.grantId);
    const totals = await page(browsers.org, '/admin/history');
    expect(totals).not.toMatch(/>1 runs/);
    expect(totals).toMatch(/>1 run, /);
  });
});

describe('around the pages', () => {
  it('answers an unknown /admin path with an HTML 404 page', async () => {
    for (const b of [browsers.org, undefined]) {
      const res = b ? await b.get('/admin/no-such-page') : await SELF.fetch('https://api.test/admin/no-such-page');
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('Page not found');
    }
  });

  it('shows each connected assistant its own usage against its limits', async () => {
    const html = await page(browsers.brand, '/admin/assistants');
    // The connection ran one query (run_query) in beforeAll; the default limits apply to connections.
    expect(html).toMatch(
      /<td data-label="Used, last 24 h"><ul class="plain"><li>1 \/ 1,000 queries<\/li><li>[^<]+ \/ 100 GiB billed<\/li><\/ul><\/td>/,
    );
  });

  it('links the inbox and the history from every page, with short labels for phones', async () => {
    const html = await page(browsers.brand, '/admin/inbox');
    expect(html).toContain(
      '<a href="/admin/inbox" aria-current="page"><span class="nav-long">Data issues</span><span class="nav-short" aria-hidden="true">Issues</span></a>',
    );
    expect(html).toContain('href="/admin/history"');
  });
});

describe('what the list pages say and find', () => {
  it('says the retention window where runs are listed: the history and a report', async () => {
    const note = 'Runs older than 90 days are in the archive: the QUERY_LOG_ARCHIVE bucket in R2';
    expect(await page(browsers.org, '/admin/history')).toContain(note);
    const inbox = await page(browsers.org, '/admin/inbox');
    const report = /href="(\/admin\/inbox\/fb_[^"]+)"/.exec(inbox)?.[1];
    expect(report).toBeDefined();
    expect(await page(browsers.org, report ?? '')).toContain(note);
  });

  it('filters the memories by the brand they reach and by words; a brand outside reach matches nothing', async () => {
    const ids = (html: string) => [...html.matchAll(/<article class="memory" id="memory-([^"]+)"/g)].map((m) => m[1]);
    const all = ids(await page(browsers.org, '/admin/memories'));
    expect(all).toContain('mem_demo_acme_orders_size');
    // Globex: system and organization memories reach it, Acme's own does not.
    const globex = ids(await page(browsers.org, '/admin/memories?brand=brand_globex'));
    expect(globex).toContain('mem_demo_customer_segments');
    expect(globex).toContain('mem_demo_monthly_date_column');
    expect(globex).not.toContain('mem_demo_acme_orders_size');
    // Words, in any case, in the title, table or text.
    expect(ids(await page(browsers.org, '/admin/memories?q=LOYALTY+tier'))).toEqual(['mem_demo_customer_segments']);
    expect(ids(await page(browsers.org, '/admin/memories?brand=brand_umbrella'))).toEqual([]);
    expect(await page(browsers.org, '/admin/memories?q=no+such+words+anywhere')).toContain('No memories match.');
  });

  it('shows a search item as a person reads it: a table as its columns, a memory as rendered Markdown', async () => {
    const table = await page(browsers.org, '/admin/search/table:brand_acme:fact__orders');
    expect(table).toContain('<th scope="col">Column</th>');
    expect(table).toMatch(/<td data-label="Column"><code>order_date<\/code><\/td>/);
    expect(table).not.toContain('"columns":');
    const memory = await page(browsers.org, '/admin/search/memory:mem_demo_customer_segments');
    expect(memory).toContain('<code>segment</code>');
    expect(memory).not.toContain('`segment`');
  });
});
