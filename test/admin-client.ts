// What the admin page tests do through the pages, as a browser would: sign in, open a page, create a key.
import { env } from 'cloudflare:test';
import { expect } from 'vitest';
import { z } from 'zod';
import { inputValue, location, TestBrowser } from './oauth-client';

export async function signedIn(admin: { email: string; password: string }, ip = '198.51.100.50'): Promise<TestBrowser> {
  const browser = new TestBrowser(ip);
  const page = await (await browser.get('/admin/login')).text();
  const res = await browser.post('/admin/login', { csrf: inputValue(page, 'csrf'), email: admin.email, password: admin.password });
  expect(res.status).toBe(303);
  expect(location(res).pathname).toBe('/admin');
  return browser;
}

/** The HTML of a page that must answer 200 (the keys page by default). */
export async function page(browser: TestBrowser, path = '/admin'): Promise<string> {
  const res = await browser.get(path);
  expect(res.status).toBe(200);
  return res.text();
}

/** The secret on a "Key created" page. */
export function shownSecret(html: string): string | undefined {
  return /id="new-key"[^>]*value="([^"]+)"/.exec(html)?.[1];
}

/**
 * Creates a key through the form as a browser does: POST (303), then the GET it redirects to, which shows the
 * secret once. Returns the key's id, secret and the created page.
 */
export async function createKey(
  browser: TestBrowser,
  fields: Record<string, string>,
): Promise<{ id: string; secret: string; html: string }> {
  const res = await browser.post('/admin/keys', { csrf: inputValue(await page(browser), 'csrf'), ...fields });
  expect(res.status).toBe(303);
  expect(location(res).pathname).toBe('/admin/keys/created');
  const html = await page(browser, location(res).pathname);
  const secret = shownSecret(html) ?? '';
  expect(secret).toMatch(/^wqk_[A-Za-z0-9_-]{43}$/);
  const row = await env.DB.prepare('SELECT id FROM api_keys WHERE name = ? ORDER BY created_at DESC')
    .bind(fields.name ?? '')
    .first();
  return { id: z.object({ id: z.string() }).parse(row).id, secret, html };
}
