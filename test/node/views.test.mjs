// The MCP Apps views (views/, built by scripts/build-views.mjs) in Debian's Chromium, each hosted in a sandboxed
// iframe by the ext-apps SDK's own host bridge (AppBridge, test/node/views-host.mjs) and fed REAL tool results
// from the local stack (`npm run dev` on a free port with a throwaway state dir, called with the MCP client):
// a capped run_query on acme's orders, and the Business Overview report of brand_acme. The view's own tool calls
// ("Load more") go through the bridge to the same MCP client. Asserts what a person sees (rows, totals, sort
// order, chart marks and summaries, themes), and that a view fetches nothing. Screenshots, desktop (1280) and
// phone (390) in light and dark, go to test-artifacts/.
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/lib/import-ts.mjs';
import { buildViews, VIEW_BUDGET_GZIP } from '../../scripts/build-views.mjs';
import { browserForTests, CHROMIUM_FLAGS } from './browser.mjs';
import { devFetch, READY_TIMEOUT_MS, sharedDevInstance } from './mcp-dev-instance.mjs';

const BROWSER = browserForTests();
const ARTIFACTS = join(ROOT, 'test-artifacts');
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const LOCALE = 'en-US';
const RESULT_VIEW = 'ui://warehouse-query-api/result-view.html';
const REPORT_VIEW = 'ui://warehouse-query-api/report-view.html';

// A capped result: more rows than one MCP result holds (MCP_ROW_CAP 200), a DATE, a TIMESTAMP, numbers of two
// types, and a column that is null for most rows.
const ORDERS_SQL =
  'SELECT order_id, order_date, order_ts, channel, quantity, revenue, CASE WHEN quantity > 2 THEN quantity END AS bulk_quantity\n' +
  'FROM `service-v1.acme.fact__orders` ORDER BY order_id';
const CHANNELS_SQL =
  'SELECT channel, COUNT(*) AS orders, ROUND(SUM(revenue), 2) AS revenue FROM `service-v1.acme.fact__orders` GROUP BY channel ORDER BY channel';

let dev;
let client;
let harness;
let harnessUrl;
let browser;

const nf = (opts) => new Intl.NumberFormat(LOCALE, opts);
const fmtInt = (n) => nf({ maximumFractionDigits: 0 }).format(n);
const fmtNum = (n) => (Number.isInteger(n) ? fmtInt(n) : nf({ minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(n));
const fmtDate = (iso) => new Intl.DateTimeFormat(LOCALE, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${iso}T00:00:00Z`));

function ok(result) {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  if (result.structuredContent !== undefined) return result.structuredContent;
  // run_query and show_report send their data once, as compact JSON text with rows as arrays in schema order.
  const text = result.content.find((c) => c.type === 'text')?.text ?? '';
  const data = withRowObjects(JSON.parse(text));
  // What only the report view reads (layout, chart specs) travels in _meta, as views/lib/host.ts merges it.
  const view = result._meta?.['warehouse/report-view'];
  if (view && Array.isArray(data.sections)) {
    const charts = view.chartSpecs ?? {};
    data.sections = data.sections.map((s) => (s.id in charts ? { ...s, chartSpec: charts[s.id] } : s));
  }
  if (view && data.report && 'dashboardConfig' in view) data.report = { ...data.report, dashboardConfig: view.dashboardConfig };
  return data;
}

/** Rows back as objects keyed by column name, as the views read them (views/lib/host.ts). */
function withRowObjects(node) {
  if (node === null || typeof node !== 'object') return node;
  const out = { ...node };
  if (Array.isArray(out.rows) && Array.isArray(out.schema)) {
    const names = out.schema.map((f) => f.name);
    out.rows = out.rows.map((r) => (Array.isArray(r) ? Object.fromEntries(names.map((n, i) => [n, r[i] ?? null])) : r));
  }
  if (Array.isArray(out.sections)) out.sections = out.sections.map(withRowObjects);
  return out;
}

async function callTool(name, args) {
  return client.callTool({ name, arguments: args });
}

/** A page on the harness with the host bridge loaded, the view's tool calls answered by the MCP client. */
async function hostPage(viewport, requests) {
  const context = await browser.newContext({ viewport, locale: LOCALE });
  const page = await context.newPage();
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => requests.push(`pageerror: ${e.message}`));
  await page.exposeFunction('hostCallTool', (name, args) => callTool(name, args));
  await page.goto(harnessUrl);
  return page;
}

/** The view's HTML as a host gets it: resources/read on the server, with the MCP Apps MIME type. */
async function readView(uri) {
  const { contents } = await client.readResource({ uri });
  expect(contents.map((c) => c.mimeType)).toEqual(['text/html;profile=mcp-app']);
  return contents[0].text;
}

async function mount(page, uri, args, result, theme) {
  const html = await readView(uri);
  await page.evaluate((opts) => Reflect.get(window, 'mountView')(opts), { html, args, result, theme, locale: LOCALE });
  const frame = page.frameLocator('iframe');
  await expect.poll(() => frame.locator('main').getAttribute('aria-busy')).toBe('false');
  // A view that could not read the result says so in an .error paragraph: fail with its words.
  expect(await frame.locator('main > p.error').allTextContents()).toEqual([]);
  return frame;
}

async function setTheme(page, theme) {
  await page.evaluate((t) => Reflect.get(window, 'setHostTheme')(t), theme);
  await expect.poll(() => page.frameLocator('iframe').locator('html').getAttribute('data-theme')).toBe(theme);
}

async function shot(page, name) {
  // Let the iframe take the height the view reported (size-changed), then make the window that tall: Chromium
  // paints a sandboxed iframe only inside the viewport, so a full-page capture would leave the rest blank.
  await page.waitForTimeout(150);
  const size = page.viewportSize();
  const height = await page.evaluate(() => Math.ceil(document.documentElement.scrollHeight));
  await page.setViewportSize({ width: size.width, height: Math.max(size.height, height) });
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
  await page.setViewportSize(size);
}

/** No sideways scrolling, in the host page or inside the view: the layout fits the width it is given. */
async function expectFits(page) {
  const outer = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(outer).toBeLessThanOrEqual(0);
  const inner = await page
    .frameLocator('iframe')
    .locator('html')
    .evaluate((el) => el.scrollWidth - el.clientWidth);
  expect(inner).toBeLessThanOrEqual(0);
}

/** Only the harness itself was requested: the view loaded nothing (its CSP also forbids it). */
function expectNothingFetched(requests) {
  expect(requests.filter((u) => !u.startsWith(harnessUrl))).toEqual([]);
}

async function tableTexts(frame, tableIndex = 0) {
  return frame
    .locator('table')
    .nth(tableIndex)
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
}

beforeAll(async () => {
  if (!BROWSER) return;
  await mkdir(ARTIFACTS, { recursive: true });
  const sizes = await buildViews({ quiet: true });
  for (const s of sizes) expect(s.gzip).toBeLessThanOrEqual(VIEW_BUDGET_GZIP);

  const hostJs = (
    await build({
      entryPoints: [join(ROOT, 'test/node/views-host.mjs')],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    })
  ).outputFiles[0].text;
  const hostHtml =
    '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<title>views harness</title><style>body{margin:0;background:#888}iframe{display:block;width:100%;border:0;height:200px}</style></head>' +
    '<body><div id="host"></div><script type="module" src="/host.js"></script></body></html>';
  harness = createServer((req, res) => {
    const js = req.url === '/host.js';
    res.writeHead(200, { 'content-type': js ? 'text/javascript' : 'text/html' });
    res.end(js ? hostJs : hostHtml);
  });
  await new Promise((resolve) => harness.listen(0, '127.0.0.1', resolve));
  harnessUrl = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (harness.address()).port}/`;

  dev = await sharedDevInstance();
  client = new Client({ name: 'views-browser-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${dev.baseUrl}/v1/data/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${dev.keys.brand}` } },
      fetch: devFetch,
    }),
  );
  browser = await chromium.launch({ executablePath: BROWSER.path, args: CHROMIUM_FLAGS, headless: true });
}, READY_TIMEOUT_MS + 60_000);

afterAll(async () => {
  await browser?.close();
  await client?.close().catch(() => undefined);
  await new Promise((resolve) => (harness ? harness.close(resolve) : resolve()));
}, 60_000);

describe.skipIf(!BROWSER)('MCP Apps views in chromium, fed by the local stack', () => {
  it('result view: a capped run_query as a typed table, sorted by mouse and keyboard, with load more through the cursor', async () => {
    // Pages fill the byte budget now; 200 rows a page keeps the paging steps this test walks.
    const args = { sql: ORDERS_SQL, maxRows: 200 };
    const result = await callTool('run_query', args);
    const first = ok(result);
    expect(first.truncated).toBe(true);
    expect(first.rowCount).toBe(200);

    const requests = [];
    const page = await hostPage(DESKTOP, requests);
    const frame = await mount(page, RESULT_VIEW, args, result, 'light');

    // Every row, in the server's order, each cell as its type says.
    const rows = await tableTexts(frame);
    expect(rows).toHaveLength(200);
    const headers = await frame.locator('thead th').allTextContents();
    expect(headers).toEqual(['Order id', 'Order date', 'Order ts', 'Channel', 'Quantity', 'Revenue', 'Bulk quantity']);
    const r0 = first.rows[0];
    expect(rows[0][0]).toBe(r0.order_id);
    expect(rows[0][1]).toBe(fmtDate(r0.order_date));
    expect(rows[0][2]).toMatch(/UTC$/);
    expect(rows[0][5]).toBe(fmtNum(r0.revenue));
    const nullIndex = first.rows.findIndex((r) => r.bulk_quantity === null);
    expect(nullIndex).toBeGreaterThanOrEqual(0);
    expect(rows[nullIndex][6]).toBe('null');
    const revenueCell = frame.locator('tbody tr').first().locator('td').nth(5);
    expect(await revenueCell.evaluate((td) => getComputedStyle(td).textAlign)).toBe('right');
    expect(first.totalRows).toBeGreaterThan(400);
    expect(first.nextCursor).toEqual(expect.any(String));
    await expect.poll(() => frame.locator('.row-count').textContent()).toContain(`200 of ${fmtInt(first.totalRows)} rows`);
    await shot(page, 'views-result-desktop-light');

    // Sort by revenue with the mouse: largest first, aria-sort says so.
    await frame.getByRole('button', { name: 'Revenue' }).click();
    const maxRevenue = Math.max(...first.rows.map((r) => r.revenue));
    expect((await tableTexts(frame))[0][5]).toBe(fmtNum(maxRevenue));
    expect(await frame.locator('th', { hasText: 'Revenue' }).getAttribute('aria-sort')).toBe('descending');
    // And by order date from the keyboard (Tab to the header button, Enter): latest first.
    await frame.getByRole('button', { name: 'Order date' }).focus();
    await page.keyboard.press('Enter');
    const latest = first.rows
      .map((r) => r.order_date)
      .sort()
      .at(-1);
    expect((await tableTexts(frame))[0][1]).toBe(fmtDate(latest));
    expect(await frame.locator('th', { hasText: 'Order date' }).getAttribute('aria-sort')).toBe('descending');

    // Load more: the view calls run_query { cursor } through the host (AppBridge -> the MCP client -> the server);
    // the next page joins the table, the count follows, and the sort still holds over all loaded rows.
    // The view sends the cursor alone, so its page fills the byte budget; read the same page to know its size
    // (a page read is no new run).
    const more = ok(await callTool('run_query', { cursor: first.nextCursor })).rowCount;
    expect(more).toBeGreaterThan(200);
    await frame.getByRole('button', { name: 'Load more' }).click();
    // A round trip to the server and 200 + more rows drawn: more than poll's 1 s default on a loaded machine.
    await expect.poll(() => frame.locator('tbody tr').count(), { timeout: 20_000 }).toBe(200 + more);
    await expect
      .poll(() => frame.locator('.row-count').textContent(), { timeout: 20_000 })
      .toContain(`${fmtInt(200 + more)} of ${fmtInt(first.totalRows)} rows`);
    expect(await frame.locator('.more-status').textContent()).toBe(`Loaded ${fmtInt(more)} more rows.`);
    const isoDates = await frame.locator('tbody td:nth-child(2)').evaluateAll((tds) => tds.map((td) => td.getAttribute('title')));
    expect(isoDates).toEqual([...isoDates].sort().reverse());
    // The rows loaded are the result's next ones in the server's order (ORDER BY order_id), after the first 200.
    const ids = (await tableTexts(frame)).map((r) => r[0]).sort();
    expect(ids.slice(0, 200)).toEqual(first.rows.map((r) => r.order_id));
    const lastOfFirstPage = first.rows.at(-1).order_id;
    expect(ids.slice(200).every((id) => id > lastOfFirstPage)).toBe(true);
    expect(new Set(ids).size).toBe(200 + more);
    // Keyboard focus stays on the next "Load more".
    expect(await frame.getByRole('button', { name: 'Load more' }).evaluate((b) => b === document.activeElement)).toBe(true);

    await expectFits(page);

    await setTheme(page, 'dark');
    const bg = await frame.locator('body').evaluate((b) => getComputedStyle(b).backgroundColor);
    expect(bg).toBe('rgb(22, 24, 29)');
    await shot(page, 'views-result-desktop-dark');
    expectNothingFetched(requests);
    await page.context().close();
  });

  it('result view at phone width, with the chart switched on for a category result', async () => {
    const args = { sql: CHANNELS_SQL };
    const result = await callTool('run_query', args);
    const data = ok(result);
    expect(data.rows.map((r) => r.channel)).toEqual(['marketplace', 'store', 'web']);

    const requests = [];
    const page = await hostPage(PHONE, requests);
    const frame = await mount(page, RESULT_VIEW, args, result, 'light');
    expect(await tableTexts(frame)).toHaveLength(3);
    const toggle = frame.getByRole('button', { name: 'Chart' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    // Two measures: one bar panel each, one bar per channel.
    await expect.poll(() => frame.locator('svg rect.bar').count()).toBe(6);
    const best = data.rows.reduce((a, b) => (b.revenue > a.revenue ? b : a));
    const summary = await frame.locator('.chart-summary').textContent();
    expect(summary).toContain(`Revenue: highest ${fmtNum(best.revenue)} for ${best.channel}`);
    const total = data.rows.reduce((s, r) => s + r.orders, 0);
    expect(summary).toContain(`total ${fmtInt(total)}`);
    await expectFits(page);
    await shot(page, 'views-result-phone-light');
    await setTheme(page, 'dark');
    await shot(page, 'views-result-phone-dark');
    expectNothingFetched(requests);
    await page.context().close();
  });
});

/** show_report on the local stack: the report, each section's rows and the window, as the report view gets it. */
async function reportResult(reportId, brandId) {
  const args = { reportId, brandId, period: { cadence: 'MONTHLY' } };
  const result = await callTool('show_report', args);
  return { args, data: ok(result), result };
}

describe.skipIf(!BROWSER)('report view in chromium, fed by the local stack', () => {
  it('Business Overview for brand_acme: tiles in dashboard order, KPIs, bar and line charts with summaries, the table, instructions', async () => {
    const { args, data, result } = await reportResult('rpt_business_overview', 'brand_acme');
    const section = (id) => data.sections.find((s) => s.id === id);
    for (const [viewport, name] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ]) {
      const requests = [];
      const page = await hostPage(viewport, requests);
      const frame = await mount(page, REPORT_VIEW, args, result, 'light');

      expect(await frame.locator('h1').textContent()).toBe('Business Overview');
      // The window the sections ran with.
      expect(data.window.cadence).toBe('MONTHLY');
      expect(await frame.locator('.window').textContent()).toBe(
        `Window: ${fmtDate(data.window.startDate)} – ${fmtDate(data.window.endDate)} (MONTHLY, ${data.window.timezone}) · Brand: brand_acme`,
      );
      // The dashboardConfig's tiles, in its order.
      const tiles = data.report.dashboardConfig.tiles;
      expect(await frame.locator('.tile').evaluateAll((els) => els.map((e) => e.dataset.queryId))).toEqual(tiles.map((t) => t.queryId));
      expect(await frame.locator('.tile h2').allTextContents()).toEqual(tiles.map((t) => section(t.queryId).name));

      // KPI tile: each headline figure, formatted.
      const kpi = section('rq_overview_kpis').rows[0];
      expect(await frame.locator('.kpi dt').allTextContents()).toEqual(['Orders', 'Customers', 'Revenue', 'AOV']);
      expect(await frame.locator('.kpi dd').allTextContents()).toEqual([
        fmtInt(kpi.orders),
        fmtInt(kpi.customers),
        fmtNum(kpi.revenue),
        fmtNum(kpi.aov),
      ]);

      // Bar chart (chartSpec bar: x channel, y revenue): one bar per channel, and its summary.
      const channels = section('rq_overview_channels').rows;
      const bar = frame.locator('[data-query-id="rq_overview_channels"] figure[data-chart="bar"]');
      expect(await bar.locator('rect.bar').count()).toBe(channels.length);
      const top = channels.reduce((a, b) => (b.revenue > a.revenue ? b : a));
      expect(await bar.locator('.chart-summary').textContent()).toContain(`Revenue: highest ${fmtNum(top.revenue)} for ${top.channel}`);
      expect(await bar.locator('svg').getAttribute('aria-labelledby')).toBe(await bar.locator('figcaption').getAttribute('id'));

      // Line chart (chartSpec line: x day, y revenue and orders): one line per measure, a point per day.
      const days = section('rq_overview_daily').rows;
      const line = frame.locator('[data-query-id="rq_overview_daily"] figure[data-chart="line"]');
      expect(await line.locator('path.line').count()).toBe(2);
      expect(await line.locator('circle.dot').count()).toBe(days.length * 2);
      const totalOrders = days.reduce((s, d) => s + d.orders, 0);
      expect(await line.locator('.chart-summary').textContent()).toContain(`Orders: highest`);
      expect(await line.locator('.chart-summary').textContent()).toContain(`total ${fmtInt(totalOrders)} over ${days.length} day values`);

      // Table tile: the ten products, sortable.
      const products = frame.locator('[data-query-id="rq_overview_top_products"] table');
      expect(await products.locator('tbody tr').count()).toBe(section('rq_overview_top_products').rows.length);
      await products.getByRole('button', { name: 'Units' }).click();
      const maxUnits = Math.max(...section('rq_overview_top_products').rows.map((r) => r.units));
      expect(await products.locator('tbody tr').first().locator('td').nth(3).textContent()).toBe(fmtInt(maxUnits));

      // The report's instructions, markdown rendered as text.
      const instructions = frame.locator('.instructions');
      expect(await instructions.textContent()).toContain('Lead with the headline KPIs');
      expect(await instructions.locator('code').allTextContents()).toEqual(['period']);

      await expectFits(page);
      if (name === 'phone') {
        // One column on a phone: every tile starts at the same x.
        const xs = await frame.locator('.tile').evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().x)));
        expect(new Set(xs).size).toBe(1);
      }
      await shot(page, `views-report-${name}-light`);
      await setTheme(page, 'dark');
      await shot(page, `views-report-${name}-dark`);
      expectNothingFetched(requests);
      await page.context().close();
    }
  });

  it('a pie chartSpec draws one slice per channel with shares in its legend and summary', async () => {
    const { args, data, result } = await reportResult('rpt_demo_channel_mix', 'brand_acme');
    const rows = data.sections.find((s) => s.id === 'rq_mix_share').rows;
    const requests = [];
    const page = await hostPage(DESKTOP, requests);
    const frame = await mount(page, REPORT_VIEW, args, result, 'light');
    const pie = frame.locator('[data-query-id="rq_mix_share"] figure[data-chart="pie"]');
    expect(await pie.locator('.slice').count()).toBe(rows.length);
    expect(await pie.locator('.legend li').count()).toBe(rows.length);
    const total = rows.reduce((s, r) => s + r.revenue, 0);
    const web = rows.find((r) => r.channel === 'web');
    const share = fmtNum((web.revenue / total) * 100);
    expect(await pie.locator('.chart-summary').textContent()).toContain(`web ${share}% (${fmtNum(web.revenue)})`);
    // A chart tile without a chartSpec (marketplace orders by day) gets the chart its columns allow: a line.
    expect(await frame.locator('[data-query-id="rq_mix_marketplace"] figure[data-chart="line"] path.line').count()).toBe(1);
    expectNothingFetched(requests);
    await page.context().close();
  });
});
