// The admin Memories page and the key form's memory permission in a real browser: Debian's chromium driven by
// playwright-core, against the Worker started with wrangler's unstable_startWorker on a free loopback port, on a
// throwaway local D1 seeded with the demo seed. Screenshots (desktop and phone) go to test-artifacts/.
//
// Flow: an org administrator sees the demo memories by table, writes one, edits it (the history shows who changed
// what and what it replaced), deletes it, restores it from the Deleted tab; the API sees each step. Then a key
// created with "Memories: Read and write" can write memories and a read-only one cannot.
import { describe, expect, it } from 'vitest';
import { browserForTests } from './browser.mjs';
import { DESKTOP, expectFitsViewport, goto, PHONE, seededWorkerAndBrowser, seedSecrets, shot, submitSignIn } from './browser-pages.mjs';

const BROWSER = browserForTests();
const { keys: KEYS, admins: ADMINS } = seedSecrets('memories');
const w = seededWorkerAndBrowser(BROWSER, 'wq-browser-memories-', { keys: KEYS, admins: ADMINS });

async function signIn(page, admin) {
  await goto(page, `${w.baseUrl}/admin/login`);
  await submitSignIn(page, admin);
  await page.waitForURL(`${w.baseUrl}/admin`);
}

/** A memory as the API shows it to `key` (status and body). */
async function apiMemory(secret, id) {
  const res = await fetch(`${w.baseUrl}/v1/data/memories/${id}`, { headers: { authorization: `Bearer ${secret}` } });
  return { status: res.status, body: await res.json() };
}

describe.skipIf(!BROWSER)('the Memories page in chromium', () => {
  it('lists by table, writes, edits with history, deletes and restores; the API follows each step', async () => {
    const context = await w.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await signIn(page, ADMINS.org);
    await page.getByRole('link', { name: 'Memories' }).click();
    await page.waitForURL(`${w.baseUrl}/admin/memories`);
    await page.getByRole('heading', { name: 'Memories', level: 1 }).waitFor();

    // Demo memories, grouped by table; system ones are read-only here.
    const orders = page.getByRole('region', { name: 'Table fact__orders' });
    await expect(
      orders.getByRole('heading', { name: 'revenue is after discounts, excluding tax and shipping, before returns' }).isVisible(),
    ).resolves.toBe(true);
    await expect(orders.getByText('System memories are changed with the admin CLI.').first().isVisible()).resolves.toBe(true);
    expect(await page.getByRole('region', { name: 'Table fact__orders' }).textContent()).not.toContain('Umbrella');
    await expectFitsViewport(page);
    await shot(page, 'admin-memories-desktop');

    // A refused write keeps what was typed and says why.
    await page.getByLabel('Applies to', { exact: true }).selectOption('brand:brand_acme');
    await page.getByLabel('Title of the new memory').fill('Returns are booked a week late');
    await page.getByLabel('Table of the new memory').fill('service-v1.acme.fact__orders');
    await page.getByLabel('Content of the new memory').fill('Returns land in `fact__orders` about **7 days** after the sale.');
    await page.getByRole('button', { name: 'Save memory' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('table must be a table name');
    expect(await page.getByLabel('Title of the new memory').inputValue()).toBe('Returns are booked a week late');
    expect(await page.getByLabel('Table of the new memory').getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('Table of the new memory').fill('fact__orders');
    await page.getByRole('button', { name: 'Save memory' }).click();
    await page.getByRole('status').filter({ hasText: 'The memory was saved' }).waitFor();
    const article = page.getByRole('article', { name: 'Returns are booked a week late' });
    const id = ((await article.getAttribute('id')) ?? '').replace(/^memory-/, '');
    expect(id).toMatch(/^mem_/);
    expect(await article.textContent()).toContain('Demo org admin (administrator)');
    const created = await apiMemory(KEYS.brand, id);
    expect(created).toMatchObject({
      status: 200,
      body: { scope: 'brand', brandId: 'brand_acme', table: 'fact__orders', author: { kind: 'user', name: 'Demo org admin' } },
    });

    // Edit: the history names who changed it and keeps what it replaced.
    await article.getByText('Edit').click();
    await article.getByLabel(/^Content of memory/).fill('Returns land in `fact__orders` about **10 days** after the sale.');
    await article.getByRole('button', { name: /^Save memory/ }).click();
    await page.getByRole('status').filter({ hasText: 'The memory was changed' }).waitFor();
    const edited = page.getByRole('article', { name: 'Returns are booked a week late' });
    await edited.getByText(/^History \(2\)/).click();
    expect(await edited.textContent()).toMatch(/Edited by Demo org admin \(administrator\) via admin pages/);
    await edited.getByText('What it replaced').click();
    expect(await edited.locator('ol.history pre').textContent()).toContain('**7 days**');
    expect((await apiMemory(KEYS.brand, id)).body.content).toContain('**10 days**');
    await shot(page, 'admin-memories-history-desktop');

    // Delete, then restore from the Deleted tab.
    await edited.getByRole('button', { name: /^Delete memory/ }).click();
    await page.getByRole('status').filter({ hasText: 'The memory was deleted' }).waitFor();
    expect(await page.getByRole('article', { name: 'Returns are booked a week late' }).count()).toBe(0);
    expect((await apiMemory(KEYS.brand, id)).status).toBe(404);
    await page.getByRole('link', { name: 'Deleted' }).click();
    await page.waitForURL(`${w.baseUrl}/admin/memories?deleted=1`);
    await page
      .getByRole('article', { name: 'Returns are booked a week late' })
      .getByRole('button', { name: /^Restore memory/ })
      .click();
    await page.getByRole('status').filter({ hasText: 'The memory was restored' }).waitFor();
    expect(await apiMemory(KEYS.brand, id)).toMatchObject({ status: 200, body: { content: expect.stringContaining('**10 days**') } });
    await context.close();
  }, 120_000);

  it('fits a phone; a brand administrator sees only what reaches its brand and cannot change organization memories', async () => {
    const phone = await w.browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await phone.newPage();
    await signIn(page, ADMINS.brand);
    await goto(page, `${w.baseUrl}/admin/memories`);
    const html = await page.content();
    expect(html).toContain('monthly reports filter on order_date');
    expect(html).not.toContain('Umbrella: revenue is in GBP');
    const orgMemory = page.getByRole('article', { name: 'monthly reports filter on order_date' });
    expect(await orgMemory.getByRole('button').count()).toBe(0);
    expect(await orgMemory.textContent()).toContain('Only an administrator of the whole organization can change this.');
    expect(await page.getByLabel('Applies to', { exact: true }).locator('option').allTextContents()).toEqual(['Acme Outdoor (brand)']);
    await expectFitsViewport(page);
    await shot(page, 'admin-memories-phone');
    await phone.close();
  }, 120_000);

  it('creates a key with "Memories: Read and write" that can write, next to a read-only one that cannot', async () => {
    const context = await w.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await signIn(page, ADMINS.brand);
    const create = async (name, memories) => {
      await goto(page, `${w.baseUrl}/admin`);
      await page.getByLabel('Name').fill(name);
      await page.getByLabel('Memories').selectOption(memories);
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('heading', { name: 'Key created' }).waitFor();
      return page.getByLabel('Your new API key').inputValue();
    };
    const writer = await create('Memory writer', 'write');
    const reader = await create('Memory reader', 'read');
    const post = (secret) =>
      fetch(`${w.baseUrl}/v1/data/memories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'from a key', content: 'written with a key' }),
      });
    const ok = await post(writer);
    expect(ok.status).toBe(201);
    expect((await ok.json()).author).toEqual({ kind: 'key', name: 'Memory writer' });
    const refused = await post(reader);
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe('MEMORY_WRITE_FORBIDDEN');
    await goto(page, `${w.baseUrl}/admin`);
    expect(await page.getByRole('row').filter({ hasText: 'Memory writer' }).textContent()).toContain('writes memories');
    expect(await page.getByRole('row').filter({ hasText: 'Memory reader' }).textContent()).not.toContain('writes memories');
    await context.close();
  }, 120_000);
});
