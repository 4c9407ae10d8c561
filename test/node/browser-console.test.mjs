// The data team's console in a real browser (Debian's chromium through playwright-core), against the Worker started
// with wrangler's unstable_startWorker over a throwaway demo-seeded D1, the local warehouse and a loopback webhook
// receiver. Screenshots at 1280 and 390 px go to test-artifacts/ (the ones in docs/images come from here).
//
// Flow: an assistant (the MCP SDK client with the org's key) runs a query on Globex and files a data issue through
// MCP; the queue delivers it to the receiver, which refuses twice and then accepts; the org administrator finds the
// report in the inbox, opens its attached query in the history, and resolves it with a note; the Acme brand
// administrator sees none of it.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { createServiceAccount } from '../../dev/warehouse/service-account.mjs';
import { DEV_PROJECT } from '../../dev/warehouse/demo-data.mjs';
import { startWarehouse } from '../../dev/warehouse/server.mjs';
import { browserForTests } from './browser.mjs';
import { DESKTOP, expectFitsViewport, goto, PHONE, seededWorkerAndBrowser, seedSecrets, shot, submitSignIn } from './browser-pages.mjs';
import { startWebhookReceiver, TEST_WEBHOOK_SECRET } from './webhook-receiver.mjs';

const BROWSER = browserForTests();
const { keys: KEYS, admins: ADMINS } = seedSecrets('console');
const SUMMARY = 'Globex order count looks doubled for yesterday';
const SQL = 'SELECT COUNT(*) AS orders FROM `service-v1.globex.fact__orders`';

/** @type {{ receiver?: Awaited<ReturnType<typeof startWebhookReceiver>>, warehouse?: Awaited<ReturnType<typeof startWarehouse>> }} */
const aux = {};
const w = seededWorkerAndBrowser(BROWSER, 'wq-browser-console-', { keys: KEYS, admins: ADMINS }, async () => {
  aux.receiver = await startWebhookReceiver();
  const account = createServiceAccount();
  // The project wrangler.toml names (BIGQUERY_PROJECT), as npm run dev's warehouse hosts it.
  aux.warehouse = await startWarehouse({
    project: DEV_PROJECT,
    serviceAccounts: [{ clientEmail: account.clientEmail, publicKeyPem: account.publicKeyPem, keyId: account.keyId }],
  });
  return {
    FEEDBACK_WEBHOOK_URL: `${aux.receiver.url}/hook`,
    // Deliveries are signed; without a secret a JSON webhook is refused (fail closed), so the test gives the one its
    // receiver verifies with.
    FEEDBACK_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    // The link in a notification comes from the configured console origin only, never from the request's address.
    CONSOLE_ORIGIN: 'https://console.example.test',
    FEEDBACK_WEBHOOK_RETRY_SECONDS: '1',
    BIGQUERY_API_BASE: aux.warehouse.url,
    GCP_SERVICE_ACCOUNT_JSON: account.json,
  };
});

afterAll(async () => {
  await aux.receiver?.close();
  await aux.warehouse?.close();
});

async function signIn(page, admin) {
  await goto(page, `${w.baseUrl}/admin/login`);
  await submitSignIn(page, admin);
  await page.waitForURL(`${w.baseUrl}/admin`);
}

/** The navigation bar is one line: every link on the same row, inside the viewport. */
async function expectNavOnOneLine(page) {
  const tops = await page.evaluate(() =>
    [...document.querySelectorAll('nav.pages a')].map((a) => Math.round(a.getBoundingClientRect().top)),
  );
  expect(new Set(tops).size).toBe(1);
  const overflow = await page.evaluate(() => {
    const nav = document.querySelector('nav.pages');
    return nav.scrollWidth - nav.clientWidth;
  });
  expect(overflow).toBeLessThanOrEqual(0);
}

async function until(what, read, done, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!BROWSER)('the data team console in chromium', () => {
  /** @type {string} */
  let ref;

  it('an assistant files a report through MCP; the webhook receiver gets it after two refusals', async () => {
    aux.receiver.plan(SUMMARY, 2);
    const client = new Client({ name: 'console-browser-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${w.baseUrl}/v1/data/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${KEYS.org}` } },
      }),
    );
    const ran = await client.callTool({ name: 'run_query', arguments: { brandId: 'brand_globex', sql: SQL } });
    expect(ran.isError ?? false).toBe(false);
    // The run's query_log row arrives through the queue (QUERY_LOG_DELIVERY = "queue", the default) within about a
    // second; the report attaches what the log holds when it is filed, so wait for it as a data team member would.
    const context = await w.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await signIn(page, ADMINS.org);
    await until(
      'the run in the history',
      async () => (await page.request.get(`${w.baseUrl}/admin/history?brand=brand_globex`)).text(),
      (html) => html.includes('globex.fact__orders'),
    );
    await context.close();
    const filed = await client.callTool({
      name: 'report_data_issue',
      arguments: {
        summary: SUMMARY,
        brandId: 'brand_globex',
        severity: 'high',
        expected: 'about 1,200 orders',
        observed: 'about 2,400 orders',
        transcript: [
          { role: 'user', content: 'How many Globex orders did we have yesterday?' },
          { role: 'assistant', content: 'I counted the orders in fact__orders.' },
          { role: 'tool', content: 'run_query: 1 row' },
          { role: 'assistant', content: 'That is twice the usual number; I will report it.' },
        ],
      },
    });
    await client.close();
    expect(filed.isError ?? false).toBe(false);
    ref = /** @type {{ feedbackRef: string }} */ (filed.structuredContent).feedbackRef;
    const got = await until(
      'the delivery',
      async () => aux.receiver.received(SUMMARY),
      (r) => r.some((x) => x.status === 200),
    );
    expect(got.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(got[2].body).toMatchObject({
      event: 'feedback.filed',
      reference: ref,
      brandId: 'brand_globex',
      severity: 'high',
      summary: SUMMARY,
      url: `https://console.example.test/admin/inbox/${ref}`,
    });
  });

  it('the org administrator finds it in the inbox, opens the attached query in the history and resolves it with a note', async () => {
    const context = await w.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await signIn(page, ADMINS.org);
    await page.getByRole('link', { name: 'Data issues' }).click();
    await page.waitForURL(`${w.baseUrl}/admin/inbox`);
    const row = page.getByRole('row').filter({ hasText: SUMMARY });
    await expect(row.textContent()).resolves.toContain('Open');
    await expectFitsViewport(page);
    await shot(page, 'admin-inbox-1280');

    await row.getByRole('link', { name: SUMMARY }).click();
    await page.waitForURL(`${w.baseUrl}/admin/inbox/${ref}`);
    await expect(page.locator('ol.conversation li').count()).resolves.toBe(4);
    await expect(page.getByText('about 2,400 orders').isVisible()).resolves.toBe(true);
    await expect(page.locator('pre.sql').first().textContent()).resolves.toBe(SQL);
    // The delivery attempts are on the report's page: two refusals, then delivered.
    await expect(page.getByRole('list', { name: 'Webhook deliveries' }).textContent()).resolves.toMatch(
      /Attempt 1.*HTTP 503.*Attempt 2.*HTTP 503.*Attempt 3.*delivered/s,
    );
    await expectFitsViewport(page);
    await shot(page, 'admin-report-1280');

    await page
      .getByRole('link', { name: /^Open the run of .* in the query history$/ })
      .first()
      .click();
    await page.waitForURL(/\/admin\/history\?requestId=req_/);
    const runs = page.getByRole('row').filter({ hasText: SQL });
    await expect(runs.count()).resolves.toBe(1);
    await expect(runs.textContent()).resolves.toMatch(/OK/);
    await expect(page.getByRole('heading', { name: 'Totals' }).isVisible()).resolves.toBe(true);
    await expectFitsViewport(page);
    await shot(page, 'admin-history-1280');

    await page.goBack();
    await page.getByLabel('New status').selectOption('resolved');
    await page.getByLabel(/^Note/).fill('Yesterday was loaded twice; the duplicate load is removed.');
    await page.getByRole('button', { name: 'Change status' }).click();
    await page.getByRole('status').filter({ hasText: 'The status was changed and recorded.' }).waitFor();
    await expect(page.locator('dl.facts').textContent()).resolves.toContain('Resolved');
    await expect(page.getByRole('list', { name: 'Status history' }).textContent()).resolves.toContain(
      `open → resolved by ${ADMINS.org.email}`,
    );
    await shot(page, 'admin-report-resolved-1280');
    await context.close();
  });

  it('on a phone: the inbox, the report and the history fit 390 px and the navigation stays on one line', async () => {
    const context = await w.browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    await signIn(page, ADMINS.org);
    await expectNavOnOneLine(page);
    for (const [path, name] of [
      ['/admin/inbox', 'admin-inbox-390'],
      [`/admin/inbox/${ref}`, 'admin-report-390'],
      ['/admin/history', 'admin-history-390'],
    ]) {
      await goto(page, `${w.baseUrl}${path}`);
      await expectNavOnOneLine(page);
      await expectFitsViewport(page);
      await shot(page, name);
    }
    await context.close();
  });

  it('keeps the keys table compact at 1280 px: no live key row taller than 150 px', async () => {
    const context = await w.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await signIn(page, ADMINS.org);
    const heights = await page.evaluate(() =>
      [...document.querySelectorAll('table.keys tbody tr')].map((tr) => Math.round(tr.getBoundingClientRect().height)),
    );
    await shot(page, 'admin-keys-compact-1280');
    expect(heights.length).toBeGreaterThan(0);
    expect(Math.max(...heights)).toBeLessThanOrEqual(150);
    await expectFitsViewport(page);
    await goto(page, `${w.baseUrl}/admin/assistants`);
    await context.close();
  });

  it('copies the MCP address on the assistants page; memory content reads as Markdown; an unknown page is an HTML 404', async () => {
    const context = await w.browser.newContext({ viewport: DESKTOP });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: w.baseUrl });
    const page = await context.newPage();
    await signIn(page, ADMINS.org);
    await goto(page, `${w.baseUrl}/admin/assistants`);
    await page.getByRole('button', { name: 'Copy address' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${w.baseUrl}/v1/data/mcp`);
    await goto(page, `${w.baseUrl}/admin/memories`);
    // The demo memories use code spans and bold; they render as elements, not as asterisks and backticks.
    expect(await page.locator('div.memory code').count()).toBeGreaterThan(0);
    expect(await page.locator('div.memory script').count()).toBe(0);
    const res = await goto(page, `${w.baseUrl}/admin/nowhere`);
    expect(res?.status()).toBe(404);
    await expect(page.getByRole('heading', { name: 'Page not found' }).isVisible()).resolves.toBe(true);
    await context.close();
  });

  it('a brand administrator of another brand sees none of it', async () => {
    const context = await w.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await signIn(page, ADMINS.brand);
    await goto(page, `${w.baseUrl}/admin/inbox`);
    await expect(page.getByText('No reports match.').isVisible()).resolves.toBe(true);
    expect(await page.content()).not.toContain(SUMMARY);
    const res = await goto(page, `${w.baseUrl}/admin/inbox/${ref}`);
    expect(res?.status()).toBe(404);
    expect(await page.content()).not.toContain(SUMMARY);
    await goto(page, `${w.baseUrl}/admin/history`);
    expect(await page.content()).not.toContain('globex.fact__orders');
    await context.close();
  });
});
