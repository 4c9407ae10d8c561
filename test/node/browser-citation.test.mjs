// Issue 39, "a citation opens", in a real browser (Debian's chromium through playwright-core; skipped without one):
// an assistant (the MCP SDK client with the org's key) searches and fetches; the result's url is the item's console
// page on CONSOLE_ORIGIN, not the address the assistant called. A person following it without a session signs in
// and lands on the item; the brand administrator following a citation of another brand's item gets a plain 404.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { createServiceAccount } from '../../dev/warehouse/service-account.mjs';
import { DEV_PROJECT } from '../../dev/warehouse/demo-data.mjs';
import { startWarehouse } from '../../dev/warehouse/server.mjs';
import { browserForTests } from './browser.mjs';
import { DESKTOP, expectFitsViewport, goto, PHONE, seededWorkerAndBrowser, seedSecrets, shot, submitSignIn } from './browser-pages.mjs';

const BROWSER = browserForTests();
const { keys: KEYS, admins: ADMINS } = seedSecrets('citation');
const CONSOLE = 'https://console.example.test';

/** @type {{ warehouse?: Awaited<ReturnType<typeof startWarehouse>> }} */
const aux = {};
const w = seededWorkerAndBrowser(BROWSER, 'wq-browser-citation-', { keys: KEYS, admins: ADMINS }, async () => {
  const account = createServiceAccount();
  aux.warehouse = await startWarehouse({
    project: DEV_PROJECT,
    serviceAccounts: [{ clientEmail: account.clientEmail, publicKeyPem: account.publicKeyPem, keyId: account.keyId }],
  });
  return { CONSOLE_ORIGIN: CONSOLE, BIGQUERY_API_BASE: aux.warehouse.url, GCP_SERVICE_ACCOUNT_JSON: account.json };
});

afterAll(async () => {
  await aux.warehouse?.close();
});

/** The JSON an MCP tool answered as its one text block. */
async function toolJson(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  expect(res.isError ?? false, JSON.stringify(res.content)).toBe(false);
  return JSON.parse(res.content[0].text);
}

/** What the person's browser opens for a citation: its path on the Worker under test (CONSOLE stands for it). */
function onWorker(url) {
  const u = new URL(url);
  expect(u.origin).toBe(CONSOLE);
  return `${w.baseUrl}${u.pathname}${u.search}`;
}

describe.skipIf(!BROWSER)('a citation opens, in chromium', () => {
  /** @type {{ id: string, url: string }[]} */
  let cited = [];

  it('search and fetch cite console pages on CONSOLE_ORIGIN, not the address the assistant called', async () => {
    const client = new Client({ name: 'citation-browser-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${w.baseUrl}/v1/data/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${KEYS.org}` } },
      }),
    );
    const { results } = await toolJson(client, 'search', { query: 'fact__orders' });
    const globex = results.find((r) => r.id === 'table:brand_globex:fact__orders');
    const acme = results.find((r) => r.id === 'table:brand_acme:fact__orders');
    expect(globex?.url).toBe(`${CONSOLE}/admin/search/table:brand_globex:fact__orders`);
    expect(acme?.url).toBe(`${CONSOLE}/admin/search/table:brand_acme:fact__orders`);
    const fetched = await toolJson(client, 'fetch', { id: globex.id });
    expect(fetched.url).toBe(globex.url);
    await client.close();
    cited = [globex, acme];
  });

  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ])('followed without a session (%s): the sign-in page, then the item itself', async (name, viewport) => {
    const [globex] = cited;
    const context = await w.browser.newContext({ viewport });
    const page = await context.newPage();
    await goto(page, onWorker(globex.url));
    const login = new URL(page.url());
    expect(login.pathname).toBe('/admin/login');
    expect(login.searchParams.get('next')).toBe(new URL(globex.url).pathname);
    await submitSignIn(page, ADMINS.org);
    await page.waitForURL(onWorker(globex.url));
    await expect(page.locator('h1').textContent()).resolves.toContain('fact__orders');
    await expect(page.locator('dl.facts code').first().textContent()).resolves.toBe(globex.id);
    // The table as a person reads it: its columns, with what they mean.
    await expect(page.getByRole('heading', { name: 'Columns' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('row').filter({ hasText: 'revenue' }).first().textContent()).resolves.toMatch(/FLOAT/);
    // A type is never broken inside its word (TIMESTAMP split over two lines at 1280 px, seen in a screenshot).
    const typeLines = await page.locator('td[data-label="Type"]').evaluateAll((tds) =>
      tds.map((td) => {
        const range = document.createRange();
        range.selectNodeContents(td);
        return { type: td.textContent ?? '', lines: new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size };
      }),
    );
    expect(typeLines.filter(({ type }) => type === 'TIMESTAMP')).not.toEqual([]);
    expect(typeLines.filter(({ type, lines }) => !type.includes(' ') && lines !== 1)).toEqual([]);
    await expect(page.locator('dl.facts').last().textContent()).resolves.toMatch(/Complete to\s*\d{4}-\d{2}-\d{2}/);
    await expectFitsViewport(page);
    await shot(page, `admin-citation-${name === 'desktop' ? 1280 : 390}`);
    await context.close();
  });

  it("another brand's item is a plain 404 for the brand administrator, after the same sign-in", async () => {
    const [globex, acme] = cited;
    const context = await w.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await goto(page, onWorker(globex.url));
    await submitSignIn(page, ADMINS.brand);
    await page.waitForURL(onWorker(globex.url));
    const res = await page.reload();
    expect(res?.status()).toBe(404);
    const text = await page.locator('main').textContent();
    expect(text).toContain('There is no item table:brand_globex:fact__orders that you can see.');
    expect(text).not.toMatch(/administer|belong|exist/i);
    // Their own brand's item opens in the same session.
    const own = await goto(page, onWorker(acme.url));
    expect(own?.status()).toBe(200);
    await context.close();
  });
});
