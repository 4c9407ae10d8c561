// Issue 39, "a citation opens": an assistant's search and fetch results carry the item's console page as `url`,
// built from CONSOLE_ORIGIN (vitest.config.ts: https://console.test) whatever host the request named. A person who
// follows one without a session is sent to sign in and, once signed in, lands on the item; the return path
// (src/web/return-path.ts) only ever goes to a console page of this origin. An item they may not see is the same
// 404 as one that does not exist.
import { env, SELF } from 'cloudflare:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { consoleLink } from '../src/web/console-link';
import { formReturnPath, LOGIN_PATH, signInReturnPath, signOutDestination } from '../src/web/return-path';
import { textData } from './mcp-client';
import { addUser, inputValue, location, TestBrowser } from './oauth-client';
import { seedDemo, TEST_ADMINS, TEST_KEYS } from './seed';

const ITEM = '/admin/search/table:brand_acme:fact__orders';

beforeAll(async () => {
  await seedDemo();
});

/** An MCP client of the org key whose requests name `origin` as their host (what a forged Host would look like). */
async function mcpAt(origin: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${origin}/v1/data/mcp`), {
    fetch: (url, init) => SELF.fetch(url, init),
    requestInit: { headers: { authorization: `Bearer ${TEST_KEYS.org}` } },
  });
  const client = new Client({ name: 'citation-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(transport);
  return client;
}

/** Signs in through the form the sign-in page shows (with whatever `next` it carries); the POST's response. */
async function signInThrough(browser: TestBrowser, loginUrl: string, admin: { email: string; password: string }, next?: string) {
  const html = await (await browser.get(loginUrl)).text();
  const fields: Record<string, string> = { csrf: inputValue(html, 'csrf'), email: admin.email, password: admin.password };
  const carried = /name="next"/.test(html) ? inputValue(html, 'next') : undefined;
  if (next !== undefined || carried !== undefined) fields.next = next ?? carried ?? '';
  return browser.post(LOGIN_PATH, fields);
}

/** The page's HTML without what differs between two renderings of one page (nonces, tokens, request ids). */
function stable(html: string): string {
  return html
    .replace(/nonce="[^"]*"/g, 'nonce=""')
    .replace(/name="csrf" value="[^"]*"/g, 'name="csrf" value=""')
    .replace(/req_[0-9a-f]+/g, 'req_');
}

describe('signInReturnPath', () => {
  it.each([
    [ITEM, ITEM],
    ['/admin/search/table%3Abrand_acme%3Afact__orders', '/admin/search/table%3Abrand_acme%3Afact__orders'],
    ['/%61dmin/search/table:brand_acme:fact__orders', ITEM],
    ['/admin/search?q=net+revenue', '/admin/search?q=net+revenue'],
    ['/admin/inbox/fb_1', '/admin/inbox/fb_1'],
    ['/admin', '/admin'],
  ])('%s returns to %s', (raw, expected) => {
    expect(signInReturnPath(raw)).toBe(expected);
  });

  it.each([
    ['another origin', 'https://evil.example/admin'],
    ['a scheme-relative URL', '//evil.example/admin'],
    ['a backslash a browser reads as a slash', '/\\evil.example/admin'],
    ['a tab a browser strips', '/\t/evil.example/admin'],
    ['a newline', '/admin\n/search'],
    ['an encoded backslash', '/%5Cevil.example/admin'],
    ['encoded slashes', '/%2F%2Fevil.example/admin'],
    ['a dot segment that makes //', '/.//evil.example/admin'],
    ['dot segments out of /admin', '/admin/../../evil'],
    ['encoded dot segments out of /admin', '/admin/%2e%2e/v1/data/brands'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a path outside the console', '/v1/data/brands'],
    ['an authorization request', '/authorize?client_id=x'],
    ['the sign-in page itself', '/admin/login?next=/admin'],
    ['the sign-out', '/admin/logout'],
    ['a lookalike prefix', '/admin.evil.example/x'],
    ['a fragment', '/admin/search#x'],
    ['an overlong path', `/admin/search?q=${'a'.repeat(3000)}`],
    ['nothing', ''],
  ])('refuses %s', (_why, raw) => {
    expect(signInReturnPath(raw)).toBeNull();
  });

  it('a form sent without a session returns to the console page it was on (its Referer), of this origin only', () => {
    const at = 'https://console.test/admin/keys';
    expect(formReturnPath('https://console.test/admin/history?brand=brand_acme', at)).toBe('/admin/history?brand=brand_acme');
    for (const referer of [
      'https://evil.example/admin/history',
      'http://console.test/admin/history',
      'https://console.test/authorize?client_id=x',
      'https://console.test/admin/login',
      'not a url',
      undefined,
    ]) {
      expect(formReturnPath(referer, at), String(referer)).toBeNull();
    }
  });

  it('signing out goes back to an authorization request, or to sign in again on the way to a console page', () => {
    expect(signOutDestination('/authorize?client_id=x')).toBe('/authorize?client_id=x');
    expect(signOutDestination(ITEM)).toBe(`${LOGIN_PATH}?next=${encodeURIComponent(ITEM)}`);
    for (const raw of ['//evil.example', '/authorize', 'https://evil.example/authorize?x', undefined]) {
      expect(signOutDestination(raw), String(raw)).toBe(LOGIN_PATH);
    }
  });
});

describe('a citation opens', () => {
  it('search and fetch urls are on CONSOLE_ORIGIN whatever host the request named; unset, the path alone', async () => {
    for (const origin of ['https://api.test', 'https://evil.example', 'http://127.0.0.1:8787']) {
      const client = await mcpAt(origin);
      const found = z
        .object({ results: z.array(z.object({ id: z.string(), url: z.string() })) })
        .parse(textData(await client.callTool({ name: 'search', arguments: { query: 'fact__orders' } })));
      expect(found.results.length, origin).toBeGreaterThan(0);
      for (const r of found.results) expect(r.url, origin).toBe(`https://console.test/admin/search/${r.id}`);
      const fetched = z
        .object({ url: z.string() })
        .parse(textData(await client.callTool({ name: 'fetch', arguments: { id: 'table:brand_acme:fact__orders' } })));
      expect(fetched.url, origin).toBe(`https://console.test${ITEM}`);
      await client.close();
    }
    expect(consoleLink({ ...env, CONSOLE_ORIGIN: '' }, ITEM)).toBe(ITEM);
    expect(consoleLink({ ...env, CONSOLE_ORIGIN: 'https://data.example.com/ignored/path' }, ITEM)).toBe(`https://data.example.com${ITEM}`);
    expect(consoleLink({ ...env, CONSOLE_ORIGIN: 'javascript:alert(1)' }, ITEM)).toBe(ITEM);
  });

  it('followed without a session: sign in, then land on the item', async () => {
    const browser = new TestBrowser();
    const first = await browser.get(ITEM);
    expect(first.status).toBe(303);
    const login = location(first);
    expect(login.pathname).toBe(LOGIN_PATH);
    expect(login.searchParams.get('next')).toBe(ITEM);
    // The form carries the return path; the POST goes back to it.
    const signedIn = await signInThrough(browser, `${login.pathname}${login.search}`, TEST_ADMINS.brand);
    expect(signedIn.status).toBe(303);
    expect(`${location(signedIn).pathname}`).toBe(ITEM);
    const item = await browser.get(ITEM);
    expect(item.status).toBe(200);
    expect(await item.text()).toContain('<code>table:brand_acme:fact__orders</code>');
    // Signed in already, the sign-in page sends straight on.
    const again = await browser.get(`${LOGIN_PATH}?next=${encodeURIComponent(ITEM)}`);
    expect(again.status).toBe(303);
    expect(location(again).pathname).toBe(ITEM);
  });

  it('a form sent after the session ended: sign in, then back to the page the form was on', async () => {
    const browser = new TestBrowser();
    const page = 'https://api.test/admin/history?outcome=error';
    const sent = await browser.fetch('/admin/keys', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://api.test', referer: page },
      body: new URLSearchParams({ csrf: 'x', name: 'k', scope: 'org:org_demo' }).toString(),
    });
    expect(sent.status).toBe(303);
    expect(location(sent).pathname).toBe(LOGIN_PATH);
    expect(location(sent).searchParams.get('next')).toBe('/admin/history?outcome=error');
    const signedIn = await signInThrough(browser, `${location(sent).pathname}${location(sent).search}`, TEST_ADMINS.org);
    expect(`${location(signedIn).pathname}${location(signedIn).search}`).toBe('/admin/history?outcome=error');
  });

  it('the escaped spelling of a route name returns to its canonical path; a data escape is kept', async () => {
    const res = await new TestBrowser().get('/%61dmin/search/table%3Abrand_acme%3Afact__orders');
    expect(res.status).toBe(303);
    expect(location(res).searchParams.get('next')).toBe('/admin/search/table%3Abrand_acme%3Afact__orders');
  });

  it.each([
    ['//evil.example/admin'],
    ['https://evil.example/admin/search/x'],
    ['/\\evil.example'],
    ['/.//evil.example/admin'],
    ['/v1/data/brands'],
  ])('a forged return path %s lands on /admin, in the form and on the POST', async (next) => {
    const browser = new TestBrowser();
    const page = await (await browser.get(`${LOGIN_PATH}?next=${encodeURIComponent(next)}`)).text();
    expect(page).not.toMatch(/name="next"/);
    const res = await signInThrough(browser, LOGIN_PATH, TEST_ADMINS.brand, next);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin');
    const signedIn = await browser.get(`${LOGIN_PATH}?next=${encodeURIComponent(next)}`);
    expect(signedIn.headers.get('location')).toBe('/admin');
  });

  it('a wrong password keeps the return path for the next try', async () => {
    const browser = new TestBrowser();
    const wrong = await signInThrough(browser, `${LOGIN_PATH}?next=${encodeURIComponent(ITEM)}`, {
      email: TEST_ADMINS.brand.email,
      password: 'not-the-password',
    });
    expect(wrong.status).toBe(401);
    expect(inputValue(await wrong.text(), 'next')).toBe(ITEM);
  });

  it('an item the person may not see is the same plain 404 as one that does not exist', async () => {
    const acme = new TestBrowser();
    const res = await signInThrough(acme, LOGIN_PATH, TEST_ADMINS.brand);
    expect(res.status).toBe(303);
    const foreign = await acme.get('/admin/search/table:brand_globex:fact__orders');
    const missing = await acme.get('/admin/search/table:brand_nope:fact__orders');
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    const a = stable(await foreign.text()).replace('brand_globex', 'X');
    const b = stable(await missing.text()).replace('brand_nope', 'X');
    expect(a).toBe(b);
    expect(a).not.toMatch(/administer|belong|exist/i);
    // Before signing in, both ask to sign in alike: nothing tells them apart either.
    const anonymous = new TestBrowser();
    const r1 = await anonymous.get('/admin/search/table:brand_globex:fact__orders');
    const r2 = await anonymous.get('/admin/search/table:brand_nope:fact__orders');
    expect([r1.status, r2.status]).toEqual([303, 303]);
    expect(location(r1).searchParams.get('next')).toBe('/admin/search/table:brand_globex:fact__orders');
    expect(location(r2).searchParams.get('next')).toBe('/admin/search/table:brand_nope:fact__orders');
  });

  it('signed in as someone who administers nothing: signing out comes back to the item after the right sign-in', async () => {
    await addUser('usr_citation_none', 'nobody-citation@demo.test', 'nobody-citation-password-1');
    const browser = new TestBrowser();
    const res = await signInThrough(browser, `${LOGIN_PATH}?next=${encodeURIComponent(ITEM)}`, {
      email: 'nobody-citation@demo.test',
      password: 'nobody-citation-password-1',
    });
    expect(location(res).pathname).toBe(ITEM);
    const refused = await browser.get(ITEM);
    expect(refused.status).toBe(403);
    const html = await refused.text();
    expect(inputValue(html, 'next')).toBe(ITEM);
    const out = await browser.post('/admin/logout', { csrf: inputValue(html, 'csrf'), next: inputValue(html, 'next') });
    expect(out.status).toBe(303);
    const login = location(out);
    expect(`${login.pathname}?next=${login.searchParams.get('next')}`).toBe(`${LOGIN_PATH}?next=${ITEM}`);
    const back = await signInThrough(browser, `${login.pathname}${login.search}`, TEST_ADMINS.brand);
    expect(location(back).pathname).toBe(ITEM);
    expect((await browser.get(ITEM)).status).toBe(200);
  });

  it('the OAuth sign-out still returns to its authorization request', async () => {
    const browser = new TestBrowser();
    await signInThrough(browser, LOGIN_PATH, TEST_ADMINS.brand);
    const csrf = inputValue(await (await browser.get('/admin')).text(), 'csrf');
    const out = await browser.post('/admin/logout', { csrf, next: '/authorize?response_type=code&client_id=x' });
    expect(out.headers.get('location')).toBe('/authorize?response_type=code&client_id=x');
  });
});
