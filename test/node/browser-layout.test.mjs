// Every console page in a real browser (Debian's chromium through playwright-core) at 1280 and 390 px, on the demo
// seed plus rows made to be awkward: a key named with 95 characters and no space, SQL with a 90-character
// identifier, a long request id, an assistant with a long name, a report with a long summary, a memory with an
// image, a table and a long code line. On each page it holds:
//
// - no horizontal overflow: the document is no wider than the window, and no visible element reaches past the
//   card (or main column, header, navigation bar) it sits in, unless a scrolling box it sits in holds it (a wide
//   table of a memory scrolls inside its own box, which must itself fit);
// - every tap target (links, buttons, inputs, selects, text areas, summaries) at least 24 x 24 px: WCAG 2.2's
//   "Target Size (Minimum)" (success criterion 2.5.8). Its "inline" exception is taken for links inside running
//   text, decided here as: a link whose parent element holds other words of its own (a sentence around the link).
//   Such a link is as tall as the line of text it sits in, and enlarging it would spread every sentence; WCAG
//   exempts exactly that case. A link that stands alone (a navigation entry, a list or table entry, a paragraph
//   that is only the link) gets no exception.
//
// Which pages: every GET route the console's page files register (adminGet / admin.get in src/**/*.page.tsx) must
// have a visit below, so a new page fails here until it is added. A page that fails is photographed to
// test-artifacts/layout-<page>-<width>.png (full-page screenshots of every page would double the file's time).
import { createHash, randomBytes } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccount } from '../../dev/warehouse/service-account.mjs';
import { DEV_PROJECT } from '../../dev/warehouse/demo-data.mjs';
import { startWarehouse } from '../../dev/warehouse/server.mjs';
import { ROOT } from '../../scripts/lib/import-ts.mjs';
import { browserForTests } from './browser.mjs';
import { DESKTOP, goto, PHONE, seededWorkerAndBrowser, seedSecrets, shot, submitSignIn } from './browser-pages.mjs';

const BROWSER = browserForTests();
const { keys: KEYS, admins: ADMINS } = seedSecrets('layout');
const CALLBACK = 'https://assistant.example/oauth/callback';

const LONG_KEY = 'looker_studio_marketing_dashboard_production_readonly_key_for_globex_coffee_team_emea_2026';
const LONG_IDENT = 'order_line_net_revenue_after_discounts_excluding_tax_and_shipping_before_returns_in_eur_cents';
const LONG_SQL =
  `SELECT order_id, customer_id, order_date, SUM(${LONG_IDENT}) AS revenue, COUNT(DISTINCT sku) AS skus ` +
  'FROM `service-v1.globex.fact__orders` WHERE order_date BETWEEN DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY) AND ' +
  'CURRENT_DATE() GROUP BY order_id, customer_id, order_date ORDER BY revenue DESC LIMIT 500';
const LONG_REQUEST = `req_${'a1b2c3d4e5'.repeat(5)}`;
const LONG_ASSISTANT = 'Claude Desktop for the Globex Coffee marketing attribution and retention analytics workspace';
const LONG_SUMMARY =
  'Globex order revenue for the EMEA region looks doubled for every day since the migration of the returns pipeline, ' +
  `see ${LONG_IDENT}`;
const MEMORY_ID = 'mem_layout_long';
const MEMORY_CONTENT = [
  'Revenue by channel, as finance reports it:',
  '',
  '| channel | share | note |',
  '|---|---:|---|',
  `| web | 61% | ${LONG_IDENT} |`,
  '| stores | 39% | after **returns** |',
  '',
  '![Revenue by channel, 2026](https://cdn.example.com/charts/revenue-by-channel.png)',
  '',
  '```',
  `SELECT SUM(${LONG_IDENT}) FROM fact__orders WHERE channel = 'web' AND order_date >= DATE '2026-01-01'`,
  '```',
].join('\n');

const q = (s) => `'${String(s).replaceAll("'", "''")}'`;
const NOW = Date.now();

/** The awkward rows, added after the demo seed. */
const EXTRA_SQL = [
  `INSERT INTO api_keys (id, name, prefix, secret_hash, org_id, created_at) VALUES ('key_layout_long', ${q(LONG_KEY)}, 'wqk_layoutlo',
    ${q('0'.repeat(64))}, 'org_demo', ${NOW - 86_400_000})`,
  ...[0, 1, 2, 3].map(
    (i) => `INSERT INTO query_log (id, request_id, principal_kind, principal_id, brand_id, sql, transport, outcome, bytes_processed,
      bytes_billed, row_count, duration_ms, created_at, org_id, error_message) VALUES ('ql_layout_${i}', ${q(`${LONG_REQUEST}${i}`)}, 'key',
      'key_layout_long', 'brand_globex', ${q(LONG_SQL)}, 'rest', ${i === 0 ? "'QUERY_FAILED'" : "'OK'"}, 104857600, 104857600, 500,
      1234, ${NOW - 60_000 * (i + 1)}, 'org_demo', ${i === 0 ? q(`Unrecognized name: ${LONG_IDENT}; Did you mean order_total? at [1:44]`) : 'NULL'})`,
  ),
  `INSERT INTO query_log (id, request_id, principal_kind, principal_id, brand_id, sql, transport, outcome, bytes_billed, row_count,
    duration_ms, created_at, org_id, user_id, client_name) VALUES ('ql_layout_oauth', ${q(`${LONG_REQUEST}x`)}, 'oauth', 'grant_layout_long',
    'brand_acme', ${q(LONG_SQL.replace('globex', 'acme'))}, 'mcp', 'OK', 10485760, 12, 321, ${NOW - 30_000}, 'org_demo',
    'user_demo_org_admin', ${q(LONG_ASSISTANT)})`,
  `INSERT INTO feedback (id, request_id, principal_kind, principal_id, org_id, brand_id, summary, expected, observed, severity, transcript,
    recent_queries, created_at) VALUES ('fb_layout_long', ${q(LONG_REQUEST)}, 'key', 'key_layout_long', 'org_demo', 'brand_globex',
    ${q(LONG_SUMMARY)}, ${q(`about 1,200 orders in ${LONG_IDENT}`)}, 'about 2,400 orders', 'high',
    ${q(
      JSON.stringify([
        { role: 'user', content: `Why is ${LONG_IDENT} doubled?` },
        { role: 'tool', content: LONG_SQL },
      ]),
    )}, '[]', ${NOW})`,
  `INSERT INTO query_jobs (id, principal_kind, principal_id, org_id, brand_id, sql, transport, request_id, bq_job_id, bq_location, status,
    reserved_bytes, estimate_bytes, bytes_processed, created_at, deadline_at, result_expires_at) VALUES ('qj_layout_long', 'key',
    'key_layout_long', 'org_demo', 'brand_globex', ${q(LONG_SQL)}, 'rest', ${q(LONG_REQUEST)}, 'bqjob_layout_long', 'US', 'running', 1000,
    1000, 500, ${NOW - 5000}, ${NOW + 3_600_000}, ${NOW + 86_400_000})`,
  `INSERT INTO memories (id, scope, org_id, table_name, title, content, author_kind, author_name, updated_by_kind, updated_by_name,
    created_at, updated_at) VALUES (${q(MEMORY_ID)}, 'org', 'org_demo', 'fact__orders', 'Revenue by channel, with a chart and a table',
    ${q(MEMORY_CONTENT)}, 'cli', 'admin CLI', 'cli', 'admin CLI', ${NOW}, ${NOW})`,
];

/** @type {{ warehouse?: Awaited<ReturnType<typeof startWarehouse>> }} */
const aux = {};
const w = seededWorkerAndBrowser(
  BROWSER,
  'wq-browser-layout-',
  { keys: KEYS, admins: ADMINS },
  async () => {
    const account = createServiceAccount();
    aux.warehouse = await startWarehouse({
      project: DEV_PROJECT,
      serviceAccounts: [{ clientEmail: account.clientEmail, publicKeyPem: account.publicKeyPem, keyId: account.keyId }],
    });
    return { BIGQUERY_API_BASE: aux.warehouse.url, GCP_SERVICE_ACCOUNT_JSON: account.json };
  },
  EXTRA_SQL,
);
afterAll(async () => {
  await aux.warehouse?.close();
});

/**
 * Every console GET route, as its page file registers it (`adminGet(admin, '/x'` and `admin.get('/x'`), under
 * /admin.
 */
async function consoleRoutes() {
  const files = [];
  const walk = async (dir) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(dir, e.name));
      else if (e.name.endsWith('.page.tsx')) files.push(join(dir, e.name));
    }
  };
  await walk(join(ROOT, 'src'));
  const routes = new Set();
  for (const f of files) {
    for (const m of (await readFile(f, 'utf8')).matchAll(/(?:adminGet\(admin,|admin\.get\()\s*'([^']+)'/g)) {
      routes.add(`/admin${m[1] === '/' ? '' : m[1]}`);
    }
  }
  expect(files.map((f) => relative(ROOT, f)).length).toBeGreaterThan(5);
  return routes;
}

/**
 * What the page breaks, measured in the page: overflowing elements and undersized tap targets, each as one line
 * (empty arrays when it holds).
 */
function measure() {
  const MIN = 24;
  const describe = (el) => {
    const id = el.id ? `#${el.id}` : '';
    const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
    const text = (el.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return `<${el.tagName.toLowerCase()}${id}${cls}> "${text}"`;
  };
  const hidden = (el) => {
    if (!el.checkVisibility({ checkVisibilityCSS: true })) return true;
    // Visually hidden text (a 1 px clipped box) is for screen readers only.
    for (let a = el; a; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (cs.clip !== 'auto' && cs.position === 'absolute') return true;
    }
    return false;
  };
  const doc = document.documentElement;
  const overflow = [];
  /** @type {{ el: Element, box: Element, past: number, before: number }[]} */
  const sticking = [];
  if (doc.scrollWidth > window.innerWidth) overflow.push(`the document is ${doc.scrollWidth - window.innerWidth} px wider than the window`);
  for (const el of document.querySelectorAll('body *')) {
    if (hidden(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    let box = null;
    let scrolled = false;
    for (let a = el.parentElement; a; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if (ox === 'auto' || ox === 'scroll' || ox === 'hidden' || ox === 'clip') {
        scrolled = true;
        break;
      }
      if (a.matches('section.card, main, header.top, nav.pages, body')) {
        box = a;
        break;
      }
    }
    if (scrolled || !box) continue;
    const b = box.getBoundingClientRect();
    const past = Math.round(r.right - b.right);
    const before = Math.round(b.left - r.left);
    if (past > 1 || before > 1) sticking.push({ el, box, past, before });
  }
  // Only the causes: an element sticking out because a child of it does is not listed again.
  const causes = sticking.filter(
    (s) => !sticking.some((t) => t.el !== s.el && s.el.contains(t.el) && t.past >= s.past && t.before >= s.before),
  );
  for (const { el, box, past, before } of causes.slice(0, 12)) {
    overflow.push(`${describe(el)} sticks out of its <${box.tagName.toLowerCase()}> by ${Math.max(past, before)} px`);
  }
  if (causes.length > 12) overflow.push(`and ${causes.length - 12} more`);
  /** @type {string[]} */
  const small = [];
  for (const el of document.querySelectorAll('a[href], button, input:not([type="hidden"]), select, textarea, summary')) {
    if (hidden(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width >= MIN && r.height >= MIN) continue;
    if (el.tagName === 'A') {
      // WCAG 2.5.8's inline exception: a link inside a sentence (its parent holds words of its own).
      const own = [...el.parentElement.childNodes]
        .filter((n) => n.nodeType === Node.TEXT_NODE)
        .map((n) => n.textContent ?? '')
        .join('')
        .replace(/[\s(),.;:·–→-]/g, '');
      if (own.length >= 3) continue;
    }
    small.push(`${describe(el)} is ${Math.round(r.width)} x ${Math.round(r.height)} px`);
  }
  return { overflow, small };
}

const b64url = (buf) => Buffer.from(buf).toString('base64url');

/** Registers an assistant with a long name and starts its authorization: the consent page's address. */
async function startConsent() {
  const reg = await fetch(`${w.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: LONG_ASSISTANT, redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }),
  });
  expect(reg.status).toBe(201);
  const { client_id: clientId } = await reg.json();
  const challenge = b64url(
    createHash('sha256')
      .update(b64url(randomBytes(32)))
      .digest(),
  );
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    scope: 'data:read',
    state: 'layout',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${w.baseUrl}/v1/data/mcp`,
  });
  return `/authorize?${query}`;
}

/**
 * The visits: a name, the address, and what the browser does first (signed out, or signed in as the org
 * administrator). `route` is the console route the visit covers.
 * @type {{ name: string, route: string, path: string }[]}
 */
const VISITS = [
  { name: 'keys', route: '/admin', path: '/admin' },
  { name: 'key-revoke', route: '/admin/keys/:id/revoke', path: '/admin/keys/key_layout_long/revoke' },
  { name: 'assistants', route: '/admin/assistants', path: '/admin/assistants' },
  { name: 'memories', route: '/admin/memories', path: '/admin/memories' },
  { name: 'memories-deleted', route: '/admin/memories', path: '/admin/memories?deleted=1' },
  { name: 'memories-filtered', route: '/admin/memories', path: '/admin/memories?brand=brand_globex&q=channel' },
  { name: 'inbox', route: '/admin/inbox', path: '/admin/inbox' },
  { name: 'inbox-report', route: '/admin/inbox/:id', path: '/admin/inbox/fb_layout_long' },
  { name: 'notifications', route: '/admin/notifications', path: '/admin/notifications' },
  { name: 'history', route: '/admin/history', path: '/admin/history' },
  { name: 'history-by-key', route: '/admin/history', path: '/admin/history?key=key_layout_long' },
  { name: 'jobs', route: '/admin/jobs', path: '/admin/jobs' },
  { name: 'catalog', route: '/admin/catalog', path: '/admin/catalog' },
  { name: 'search', route: '/admin/search', path: '/admin/search?q=revenue' },
  { name: 'search-memory', route: '/admin/search/:id', path: `/admin/search/memory:${MEMORY_ID}` },
  { name: 'search-table', route: '/admin/search/:id', path: '/admin/search/table:brand_globex:fact__orders' },
  { name: 'search-report', route: '/admin/search/:id', path: '/admin/search/brand:brand_globex' },
  { name: 'not-found', route: '', path: '/admin/no-such-page' },
];

/** Routes covered elsewhere in this file: the sign-in page (signed out), the key-created page (after a create), the CSV. */
const COVERED_APART = new Set(['/admin/login', '/admin/keys/created', '/admin/history.csv', '/admin/assistants/revoke']);

describe.skipIf(!BROWSER)('every console page at 1280 and 390 px', () => {
  it('visits every console GET route the page files register', async () => {
    const routes = await consoleRoutes();
    const visited = new Set([...VISITS.map((v) => v.route), ...COVERED_APART]);
    expect([...routes].filter((r) => !visited.has(r))).toEqual([]);
  });

  for (const [label, viewport] of /** @type {const} */ ([
    ['1280', DESKTOP],
    ['390', PHONE],
  ])) {
    describe(`at ${label} px`, () => {
      /** @type {import('playwright-core').BrowserContext} */
      let context;
      /** @type {import('playwright-core').Page} */
      let page;
      /** What the page breaks (overflow and small targets), which must be nothing; a screenshot of a page that breaks. */
      const expectHolds = async (name) => {
        const found = await page.evaluate(measure);
        if (found.overflow.length || found.small.length) await shot(page, `layout-${name}-${label}`);
        expect(found).toEqual({ overflow: [], small: [] });
      };

      beforeAll(async () => {
        if (!BROWSER) return;
        context = await w.browser.newContext(
          viewport === PHONE ? { viewport, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : { viewport },
        );
        await context.route('https://assistant.example/**', (route) => route.abort());
        page = await context.newPage();
      });
      afterAll(async () => {
        await context?.close();
      });

      it('the sign-in page', async () => {
        await goto(page, `${w.baseUrl}/admin/login`);
        await expectHolds('login');
      });

      it('the sign-in and consent pages of an assistant with a long name', async () => {
        await goto(page, `${w.baseUrl}${await startConsent()}`);
        await expectHolds('authorize-sign-in');
        await submitSignIn(page, ADMINS.org);
        await page.getByRole('button', { name: 'Allow' }).waitFor();
        await expectHolds('consent');
        await Promise.all([
          page.waitForRequest((req) => req.url().startsWith(CALLBACK)),
          page.getByRole('button', { name: 'Allow' }).click(),
        ]);
        // The callback is refused (no network): a fresh tab for what follows.
        await page.close();
        page = await context.newPage();
      });

      it('the keys page and, after a create, the created key', async () => {
        await goto(page, `${w.baseUrl}/admin`);
        await expectHolds('keys-before-create');
        await page.getByLabel('Name', { exact: true }).fill(`Layout ${label} ${LONG_KEY}`.slice(0, 100));
        await page.getByRole('button', { name: 'Create key' }).click();
        await page.waitForURL(`${w.baseUrl}/admin/keys/created`);
        await expectHolds('key-created');
      });

      for (const v of VISITS) {
        it(`${v.name}: ${v.path}`, async () => {
          await goto(page, `${w.baseUrl}${v.path}`);
          await expectHolds(v.name);
        });
      }

      it("the connected assistant's confirmation page", async () => {
        await goto(page, `${w.baseUrl}/admin/assistants`);
        await page
          .getByRole('link', { name: /^Revoke/ })
          .first()
          .click();
        await page.waitForURL(/\/admin\/assistants\/revoke/);
        await expectHolds('assistant-revoke');
      });
    });
  }
});
