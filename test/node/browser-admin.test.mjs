// The administration pages and the OAuth consent screen in a real browser: Debian's chromium driven by
// playwright-core, against the Worker started with wrangler's unstable_startWorker on a free loopback port, on a
// throwaway local D1 seeded with the demo seed. Screenshots (desktop and phone) go to test-artifacts/.
//
// Flow: sign in to /admin, create a key and see it once (copy button, then gone from the list), connect an
// assistant through /authorize on a phone-sized screen (sign in, consent, Allow), use its token on the MCP
// endpoint, then revoke it from the admin page and see the token refused.
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unstable_startWorker } from 'wrangler';
import { d1Execute } from '../../scripts/lib/d1.mjs';
import { importWorkerModules, ROOT } from '../../scripts/lib/import-ts.mjs';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = join(ROOT, 'test-artifacts');
const CALLBACK = 'https://assistant.example/oauth/callback';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

const keySecret = (tag) => `wqk_${tag.padEnd(43, '0')}`;
const KEYS = { org: keySecret('browserOrg'), brand: keySecret('browserBrand'), other: keySecret('browserOther') };
const ADMINS = {
  org: { email: 'org-admin@browser.test', password: 'org-admin-browser-password' },
  brand: { email: 'brand-admin@browser.test', password: 'brand-admin-browser-password' },
};

let stateDir;
let worker;
let baseUrl;
let browser;

const b64url = (buf) => Buffer.from(buf).toString('base64url');

beforeAll(async () => {
  // wrangler in-process: no telemetry, no fetch of the Request.cf placeholder (offline machine).
  process.env.WRANGLER_SEND_METRICS = 'false';
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = 'false';
  await mkdir(ARTIFACTS, { recursive: true });
  stateDir = await mkdtemp(join(tmpdir(), 'wq-browser-'));

  const { buildDemoSeed } = await importWorkerModules({ 'src/seed/demo-catalog.ts': ['buildDemoSeed'] });
  const seed = await buildDemoSeed({ now: Date.now(), keys: KEYS, admins: ADMINS });
  const schema = await readFile(join(ROOT, 'schema.sql'), 'utf8');
  const file = join(stateDir, 'bootstrap.sql');
  await writeFile(file, `${schema}\n${seed.map((s) => `${s.trim().replace(/;+$/, '')};`).join('\n')}\n`);
  await d1Execute({ persistTo: stateDir }, { file });

  worker = await unstable_startWorker({
    config: join(ROOT, 'wrangler.toml'),
    envFiles: [],
    bindings: {
      SESSION_SECRET: { type: 'plain_text', value: randomBytes(32).toString('hex') },
      CURSOR_SECRET: { type: 'plain_text', value: randomBytes(32).toString('hex') },
    },
    dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, persist: stateDir, watch: false, logLevel: 'error' },
  });
  await worker.ready;
  baseUrl = new URL(await worker.url).origin;

  await access(CHROMIUM);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await worker?.dispose();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

async function shot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** No horizontal scrolling: the layout fits the viewport (phone and desktop). */
async function expectFitsViewport(page) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

async function signIn(page, admin) {
  await page.getByLabel('Email').fill(admin.email);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function mcpToolsList(token) {
  return fetch(`${baseUrl}/v1/data/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

describe('administration and consent in chromium', () => {
  let desktop;
  let accessToken;

  it('signs in and creates a key whose secret is shown once', async () => {
    desktop = await browser.newContext({ viewport: DESKTOP });
    await desktop.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    const page = await desktop.newPage();
    await page.goto(`${baseUrl}/admin`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await shot(page, 'admin-sign-in-desktop');
    await signIn(page, ADMINS.org);
    await page.waitForURL(`${baseUrl}/admin`);
    await expect(page.getByRole('heading', { name: 'API keys and connected assistants' }).isVisible()).resolves.toBe(true);
    // The seeded keys are listed by prefix.
    expect(await page.content()).toContain(KEYS.org.slice(0, 12));
    await expectFitsViewport(page);
    await shot(page, 'admin-dashboard-desktop');

    await page.getByLabel('Name').fill('Browser test key');
    await page.getByLabel('Reaches').selectOption('brand:brand_acme');
    await page.getByLabel(/Queries per 24 h/).fill('50');
    await page.getByLabel(/Max GiB billed per query/).fill('1');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Key created' }).waitFor();
    const secret = await page.getByLabel('Your new API key').inputValue();
    expect(secret).toMatch(/^wqk_[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await shot(page, 'admin-key-created-desktop');

    // The key works at once.
    const brands = await fetch(`${baseUrl}/v1/data/brands`, { headers: { authorization: `Bearer ${secret}` } });
    expect(brands.status).toBe(200);
    expect((await brands.json()).brands.map((b) => b.brandId)).toEqual(['brand_acme']);

    // Back on the list: name and prefix, never the secret again.
    await page.getByRole('link', { name: 'Back to API keys' }).click();
    await page.waitForURL(`${baseUrl}/admin`);
    const html = await page.content();
    expect(html).toContain('Browser test key');
    expect(html).toContain(secret.slice(0, 12));
    expect(html).not.toContain(secret);
    await page.close();
  });

  it('connects an assistant on a phone: sign in, consent with client, host and brands, Allow', async () => {
    // A public client registers itself (DCR), as Claude or ChatGPT do.
    const reg = await fetch(`${baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Browser Test Assistant', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }),
    });
    expect(reg.status).toBe(201);
    const { client_id: clientId } = await reg.json();
    const verifier = b64url(randomBytes(32));
    const challenge = b64url(createHash('sha256').update(verifier).digest());

    const phone = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
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
      resource: `${baseUrl}/v1/data/mcp`,
    });
    await page.goto(`${baseUrl}/authorize?${q}`);
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
    expect(consent).toMatch(/Read only/);
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

    const token = await fetch(`${baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: clientId, code_verifier: verifier }),
    });
    expect(token.status).toBe(200);
    accessToken = (await token.json()).access_token;
    expect((await mcpToolsList(accessToken)).status).toBe(200);
  });

  it('lists the assistant in the admin page and revokes it: the token is refused at once', async () => {
    const page = await desktop.newPage();
    await page.goto(`${baseUrl}/admin`);
    const row = page.getByRole('row').filter({ hasText: 'Browser Test Assistant' });
    await expect(row.isVisible()).resolves.toBe(true);
    expect(await row.textContent()).toContain(ADMINS.brand.email);
    await shot(page, 'admin-assistants-desktop');
    await row.getByRole('button', { name: /^Revoke Browser Test Assistant/ }).click();
    await page.getByText('The assistant was disconnected').waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Browser Test Assistant' }).count()).toBe(0);
    await shot(page, 'admin-assistant-revoked-desktop');
    const refused = await mcpToolsList(accessToken);
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.code).toBe('UNAUTHORIZED');
    await page.close();
  });

  it('lays the dashboard out for a phone', async () => {
    const phone = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await phone.newPage();
    await page.goto(`${baseUrl}/admin/login`);
    await signIn(page, ADMINS.org);
    await page.waitForURL(`${baseUrl}/admin`);
    await expectFitsViewport(page);
    // Table rows become labelled cards: the header row is visually hidden, each cell shows its label.
    const label = await page.locator('td[data-label="Prefix"]').first().evaluate((td) => getComputedStyle(td, '::before').content);
    expect(label).toBe('"Prefix"');
    await shot(page, 'admin-dashboard-phone');
    await phone.close();
    await desktop.close();
  });
});
