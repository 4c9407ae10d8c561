// The administration pages and the OAuth consent screen in a real browser: Debian's chromium driven by
// playwright-core, against the Worker started with wrangler's unstable_startWorker on a free loopback port, on a
// throwaway local D1 seeded with the demo seed. Screenshots (desktop and phone) go to test-artifacts/.
//
// Flow: sign in to /admin, create a key and see it once (copy button; a reload shows nothing; gone from the list),
// revoke it through the confirmation page, connect an assistant through /authorize on a phone-sized screen (sign
// in, consent, Allow), use its token on the MCP endpoint, then revoke it from the connected-assistants page and see
// the token refused. The keys page is checked at 1280 and 390 px: no horizontal overflow, no date broken inside.
//
// Without a browser the file is skipped with one loud line (test/node/browser.mjs); .ci/run sets REQUIRE_BROWSER=1.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { browserForTests } from './browser.mjs';
import {
  DESKTOP,
  expectFitsViewport,
  goto,
  PHONE,
  seededWorkerAndBrowser,
  seedSecrets,
  shot,
  submitSignIn as signIn,
} from './browser-pages.mjs';

const BROWSER = browserForTests();
const CALLBACK = 'https://assistant.example/oauth/callback';
const { keys: KEYS, admins: ADMINS } = seedSecrets('browser');
const w = seededWorkerAndBrowser(BROWSER, 'wq-browser-', { keys: KEYS, admins: ADMINS });

const b64url = (buf) => Buffer.from(buf).toString('base64url');

async function mcpToolsList(token) {
  return fetch(`${w.baseUrl}/v1/data/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

/** The table of a page fits its card, and no date or time inside a cell is broken across lines. */
async function expectTableFitsAndDatesWhole(page) {
  const { tables, broken, sticking } = await page.evaluate(() => ({
    tables: [...document.querySelectorAll('table')].map((t) => ({ scroll: t.scrollWidth, width: t.parentElement.clientWidth })),
    broken: [...document.querySelectorAll('time .nw')].filter((span) => span.getClientRects().length !== 1).map((span) => span.textContent),
    // Nothing visible in a cell sticks out of it (inputs and buttons of an open form included).
    sticking: [...document.querySelectorAll('td input, td button, td a, td code, td time')]
      .filter((el) => el.checkVisibility() && el.getBoundingClientRect().right > el.closest('td').getBoundingClientRect().right + 1)
      .map(
        (el) =>
          `${el.outerHTML.slice(0, 60)}: right edge ${el.getBoundingClientRect().right} > cell ${el.closest('td').getBoundingClientRect().right}`,
      ),
  }));
  expect(sticking).toEqual([]);
  expect(tables.length).toBeGreaterThan(0);
  for (const t of tables) expect(t.scroll).toBeLessThanOrEqual(t.width);
  expect(broken).toEqual([]);
  // Each <time> holds its date and time tokens whole (e.g. never "2026-05-" / "01").
  const times = await page.locator('time').allTextContents();
  expect(times.length).toBeGreaterThan(0);
  for (const t of times) expect(t).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
}

describe.skipIf(!BROWSER)('administration and consent in chromium', () => {
  let desktop;
  let accessToken;

  it('signs in, shows the empty assistants page with the MCP address, creates a key whose secret is shown once', async () => {
    desktop = await w.browser.newContext({ viewport: DESKTOP });
    await desktop.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: w.baseUrl });
    const page = await desktop.newPage();
    await goto(page, `${w.baseUrl}/admin`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await shot(page, 'admin-sign-in-desktop');
    await signIn(page, ADMINS.org);
    await page.waitForURL(`${w.baseUrl}/admin`);
    await expect(page.getByRole('heading', { name: 'API keys', exact: true }).isVisible()).resolves.toBe(true);
    // A favicon, inline.
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:image\/svg\+xml,/);
    // The seeded keys are listed by prefix, live ones saying so.
    expect(await page.content()).toContain(KEYS.org.slice(0, 12));
    await expect(
      page
        .getByRole('row')
        .filter({ hasText: KEYS.org.slice(0, 12) })
        .getByText('Live', { exact: true })
        .isVisible(),
    ).resolves.toBe(true);

    // Nothing connected yet: the assistants page says where to connect.
    await page.getByRole('link', { name: 'Connected assistants' }).click();
    await page.waitForURL(`${w.baseUrl}/admin/assistants`);
    await expect(page.getByText('No assistants are connected yet').isVisible()).resolves.toBe(true);
    expect(await page.locator('#mcp-url').textContent()).toBe(`${w.baseUrl}/v1/data/mcp`);
    await expectFitsViewport(page);
    await shot(page, 'admin-assistants-empty-desktop');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`${w.baseUrl}/admin`);

    await page.getByLabel('Name').fill('Browser test key');
    await page.getByLabel('Reaches').selectOption('brand:brand_acme');
    await page.getByLabel(/Queries per 24 h/).fill('50');
    await page.getByLabel(/Bytes billed per 24 h/).fill('0.5 GiB');
    await page.getByLabel(/Max bytes billed per query/).fill('20,000,000 bytes');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Key created' }).waitFor();
    // POST/redirect/GET: the page showing the secret is a GET of its own.
    expect(new URL(page.url()).pathname).toBe('/admin/keys/created');
    const secret = await page.getByLabel('Your new API key').inputValue();
    expect(secret).toMatch(/^wqk_[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await shot(page, 'admin-key-created-desktop');

    // The key works at once.
    const brands = await fetch(`${w.baseUrl}/v1/data/brands`, { headers: { authorization: `Bearer ${secret}` } });
    expect(brands.status).toBe(200);
    expect((await brands.json()).brands.map((b) => b.brandId)).toEqual(['brand_acme']);

    // A reload neither shows the secret again nor creates another key.
    const reloaded = await page.reload();
    expect(reloaded.status()).toBe(410);
    await page.getByRole('heading', { name: 'Nothing to show' }).waitFor();
    expect(await page.content()).not.toContain(secret);
    await shot(page, 'admin-key-created-reloaded-desktop');

    // Back on the list: name, prefix and the limits as typed, never the secret again; one such key.
    await page.getByRole('link', { name: 'Back to API keys' }).click();
    await page.waitForURL(`${w.baseUrl}/admin`);
    const html = await page.content();
    expect(html).not.toContain(secret);
    const row = page.getByRole('row').filter({ hasText: 'Browser test key' });
    expect(await row.count()).toBe(1);
    const rowText = await row.textContent();
    expect(rowText).toContain(secret.slice(0, 12));
    expect(rowText).toContain('0.5 GiB / 24 h');
    expect(rowText).toContain('20,000,000 bytes per query');
    await page.close();
  });

  it('lays the keys page out at 1280 px: no overflow, no date broken inside, change-limits form open', async () => {
    const page = await desktop.newPage();
    await goto(page, `${w.baseUrl}/admin`);
    await expectFitsViewport(page);
    await expectTableFitsAndDatesWhole(page);
    await shot(page, 'admin-keys-1280');
    const row = page.getByRole('row').filter({ hasText: 'Browser test key' });
    await row.getByText('Change limits').click();
    // The form shows the stored limits exactly as typed.
    expect(await row.getByLabel(/Bytes billed in 24 h/).inputValue()).toBe('0.5 GiB');
    expect(await row.getByLabel(/Max bytes billed by one query/).inputValue()).toBe('20,000,000 bytes');
    await expectFitsViewport(page);
    await expectTableFitsAndDatesWhole(page);
    await shot(page, 'admin-keys-limits-open-1280');
    await page.close();
  });

  it('asks for confirmation before revoking a key, then revokes it', async () => {
    const page = await desktop.newPage();
    await goto(page, `${w.baseUrl}/admin`);
    const row = page.getByRole('row').filter({ hasText: 'Browser test key' });
    await row.getByRole('link', { name: 'Revoke key Browser test key' }).click();
    await page.getByRole('heading', { name: 'Revoke key Browser test key?' }).waitFor();
    await shot(page, 'admin-key-revoke-confirm-desktop');
    // Cancel changes nothing.
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.waitForURL(/\/admin(#.*)?$/);
    expect(await page.getByRole('row').filter({ hasText: 'Browser test key' }).getByText('Live', { exact: true }).count()).toBe(1);
    await page.getByRole('row').filter({ hasText: 'Browser test key' }).getByRole('link', { name: 'Revoke key Browser test key' }).click();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('The key was revoked').waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Browser test key' }).textContent()).toMatch(
      /Revoked \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/,
    );
    await page.close();
  });

  it('connects an assistant on a phone: sign in, consent with client, host and brands, Allow', async () => {
    // A public client registers itself (DCR), as Claude or ChatGPT do.
    const reg = await fetch(`${w.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Browser Test Assistant', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }),
    });
    expect(reg.status).toBe(201);
    const { client_id: clientId } = await reg.json();
    const verifier = b64url(randomBytes(32));
    const challenge = b64url(createHash('sha256').update(verifier).digest());

    const phone = await w.browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await phone.newPage();
    // The assistant's callback is not on this machine (nor is any network): the redirect to it is observed as a
    // request (Playwright's routing does not see redirect hops) and left to fail.
    await page.route('https://assistant.example/**', (route) => route.abort());
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: CALLBACK,
      scope: 'data:read',
      state: 'browser-state',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${w.baseUrl}/v1/data/mcp`,
    });
    await goto(page, `${w.baseUrl}/authorize?${q}`);
    await expect(page.getByText('Browser Test Assistant').first().isVisible()).resolves.toBe(true);
    await expectFitsViewport(page);
    await shot(page, 'authorize-sign-in-phone');
    await signIn(page, ADMINS.brand);
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const consent = await page.content();
    expect(await page.locator('#client-name').textContent()).toBe('Browser Test Assistant');
    expect(await page.locator('#redirect-host').textContent()).toBe('assistant.example');
    expect(consent).toContain('Acme Outdoor');
    expect(consent).not.toContain('Globex Coffee');
    expect(consent).toMatch(/It cannot change any warehouse data/);
    await expectFitsViewport(page);
    await shot(page, 'authorize-consent-phone');
    const [callback] = await Promise.all([
      page.waitForRequest((req) => req.url().startsWith(CALLBACK)),
      page.getByRole('button', { name: 'Allow' }).click(),
    ]);
    const back = new URL(callback.url());
    expect(back.searchParams.get('state')).toBe('browser-state');
    const code = back.searchParams.get('code');
    expect(code).toBeTruthy();
    await phone.close();

    const token = await fetch(`${w.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: CALLBACK,
        client_id: clientId,
        code_verifier: verifier,
      }),
    });
    expect(token.status).toBe(200);
    accessToken = (await token.json()).access_token;
    expect((await mcpToolsList(accessToken)).status).toBe(200);
  });

  it('lists the assistant on the connected-assistants page and revokes it after confirming: the token is refused at once', async () => {
    const page = await desktop.newPage();
    await goto(page, `${w.baseUrl}/admin/assistants`);
    const row = page.getByRole('row').filter({ hasText: 'Browser Test Assistant' });
    await expect(row.isVisible()).resolves.toBe(true);
    expect(await row.textContent()).toContain(ADMINS.brand.email);
    await expectTableFitsAndDatesWhole(page);
    await shot(page, 'admin-assistants-desktop');
    await row.getByRole('link', { name: /^Revoke Browser Test Assistant/ }).click();
    await page.getByRole('heading', { name: 'Disconnect Browser Test Assistant?' }).waitFor();
    await shot(page, 'admin-assistant-revoke-confirm-desktop');
    await page.getByRole('button', { name: 'Revoke connection' }).click();
    await page.getByText('The assistant was disconnected').waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Browser Test Assistant' }).count()).toBe(0);
    await shot(page, 'admin-assistant-revoked-desktop');
    const refused = await mcpToolsList(accessToken);
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.code).toBe('UNAUTHORIZED');
    await page.close();
  });

  it('lays the keys page out for a 390 px phone: cards, no overflow, no date broken inside', async () => {
    const phone = await w.browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await phone.newPage();
    await goto(page, `${w.baseUrl}/admin/login`);
    await signIn(page, ADMINS.org);
    await page.waitForURL(`${w.baseUrl}/admin`);
    await expectFitsViewport(page);
    await expectTableFitsAndDatesWhole(page);
    // Table rows become labelled cards: the header row is visually hidden, each cell shows its label.
    const label = await page
      .locator('td[data-label="Prefix"]')
      .first()
      .evaluate((td) => getComputedStyle(td, '::before').content);
    expect(label).toBe('"Prefix"');
    await shot(page, 'admin-keys-390');
    await page.locator('summary').first().click();
    await expectFitsViewport(page);
    await expectTableFitsAndDatesWhole(page);
    await shot(page, 'admin-keys-limits-open-390');
    await goto(page, `${w.baseUrl}/admin/assistants`);
    await expectFitsViewport(page);
    await shot(page, 'admin-assistants-390');
    await phone.close();
    await desktop.close();
  });
});
