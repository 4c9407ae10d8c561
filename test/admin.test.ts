import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { sha256Hex } from '../src/lib/ids';
import { oauthHelpers } from '../src/oauth/provider';
import { DEMO_USER_IDS } from '../src/seed/demo-tenants';
import { createKey, page, shownSecret, signedIn } from './admin-client';
import { addUser, connectAssistant, inputValue, location, ORIGIN, rawToolsList, TestBrowser } from './oauth-client';
import { seedDemo, TEST_ADMINS, TEST_KEYS, WAIT_UNTIL_WORK } from './seed';
import { DEMO_BRAND_LISTING } from './demo-model';

beforeAll(async () => {
  await seedDemo();
  await addUser('user_plain', 'plain@demo.test', 'plain-password-1');
});

const GIB = 1024 ** 3;

describe('sign in and out', () => {
  it('sends a signed-out visitor to the sign-in page', async () => {
    const res = await new TestBrowser().get('/admin');
    expect(res.status).toBe(303);
    expect(location(res).pathname).toBe('/admin/login');
    const login = await new TestBrowser().get('/admin/login');
    expect(login.status).toBe(200);
    const html = await login.text();
    expect(html).toMatch(/<label for="email">Email<\/label>/);
    expect(html).toMatch(/<label for="password">Password<\/label>/);
    expect(html).toContain('name="viewport"');
  });

  it('sets a __Host- session cookie that is HttpOnly, Secure and SameSite=Lax; the session lives server-side', async () => {
    const browser = new TestBrowser();
    const page = await (await browser.get('/admin/login')).text();
    const res = await browser.post('/admin/login', {
      csrf: inputValue(page, 'csrf'),
      email: TEST_ADMINS.org.email,
      password: TEST_ADMINS.org.password,
    });
    const cookie = res.headers.getAll('set-cookie').find((c) => c.startsWith('__Host-wq-session='));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; Secure/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\//i);
    expect(cookie).not.toMatch(/Domain=/i);
    const token = browser.cookies.get('__Host-wq-session') ?? '';
    expect(await env.OAUTH_KV.get(`admin-session:${await sha256Hex(token)}`, 'json')).toMatchObject({ userId: DEMO_USER_IDS.org });
  });

  it('signing out deletes the session: the old cookie no longer works', async () => {
    const browser = await signedIn(TEST_ADMINS.org);
    const token = browser.cookies.get('__Host-wq-session') ?? '';
    const html = await page(browser);
    const out = await browser.post('/admin/logout', { csrf: inputValue(html, 'csrf') });
    expect(out.status).toBe(303);
    expect(location(out).pathname).toBe('/admin/login');
    expect(await env.OAUTH_KV.get(`admin-session:${await sha256Hex(token)}`)).toBeNull();
    const replay = await SELF.fetch(`${ORIGIN}/admin`, { headers: { cookie: `__Host-wq-session=${token}` }, redirect: 'manual' });
    expect(replay.status).toBe(303);
  });

  it('shows a non-administrator a refusal, not the keys', async () => {
    const browser = await signedIn({ email: 'plain@demo.test', password: 'plain-password-1' });
    const res = await browser.get('/admin');
    expect(res.status).toBe(403);
    const html = await res.text();
    expect(html).toContain('does not administer any organization or brand');
    expect(html).not.toContain('Create an API key');
  });

  it('serves pages with a nonce CSP, no framing, no caching', async () => {
    const browser = await signedIn(TEST_ADMINS.org);
    const res = await browser.get('/admin');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(await res.text()).toContain(`<style nonce="${nonce}">`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('keeps the pages out of the OpenAPI document', async () => {
    const doc = z
      .object({ paths: z.record(z.string(), z.unknown()) })
      .parse(await (await SELF.fetch(`${ORIGIN}/v1/data/openapi.json`)).json());
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin') || p.startsWith('/authorize') || p.startsWith('/oauth'))).toEqual(
      [],
    );
  });
});

describe('API keys', () => {
  it('lists the keys of what the user administers, with prefix, scope, dates and limits, never the secret', async () => {
    const org = await page(await signedIn(TEST_ADMINS.org));
    const brand = await page(await signedIn(TEST_ADMINS.brand));
    const prefixOf = (secret: string) => secret.slice(0, 12);
    expect(org).toContain(prefixOf(TEST_KEYS.org));
    expect(org).toContain(prefixOf(TEST_KEYS.brand));
    expect(org).not.toContain(prefixOf(TEST_KEYS.other));
    expect(brand).toContain(prefixOf(TEST_KEYS.brand));
    expect(brand).not.toContain(prefixOf(TEST_KEYS.org));
    for (const secret of Object.values(TEST_KEYS)) expect(org).not.toContain(secret);
    expect(org).toMatch(/queries \/ 24 h/);
    expect(org).toMatch(/<th scope="col">Last used<\/th>/);
  });

  it('creates a key with POST/redirect/GET: the secret is shown once, a reload shows nothing; it works at once, only its hash is stored', async () => {
    const browser = await signedIn(TEST_ADMINS.org);
    const html = await page(browser);
    const created = await browser.post('/admin/keys', {
      csrf: inputValue(html, 'csrf'),
      name: 'Looker <Studio>',
      scope: 'brand:brand_globex',
      dailyQueries: '25',
      dailyBytes: '2',
      maxBytes: '0.5 GiB',
    });
    expect(created.status).toBe(303);
    expect(location(created).pathname).toBe('/admin/keys/created');
    expect(await created.text()).not.toMatch(/wqk_/);
    const shown = await browser.get('/admin/keys/created');
    expect(shown.status).toBe(200);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    const createdPage = await shown.text();
    expect(createdPage).toContain('Looker &lt;Studio&gt;');
    expect(createdPage).toContain('Copy key');
    const secret = shownSecret(createdPage);
    expect(secret).toMatch(/^wqk_[A-Za-z0-9_-]{43}$/);

    // A reload shows nothing new: no secret, no second key.
    const keys = async () => (await env.DB.prepare('SELECT count(*) AS n FROM api_keys').first<{ n: number }>())?.n;
    const before = await keys();
    const reload = await browser.get('/admin/keys/created');
    expect(reload.status).toBe(410);
    const again = await reload.text();
    expect(again).toContain('shown only once');
    expect(again).not.toMatch(/wqk_/);
    expect(await keys()).toBe(before);
    // Nor does another session's visit, nor a signed-out one.
    expect((await (await signedIn(TEST_ADMINS.org)).get('/admin/keys/created')).status).toBe(410);
    expect(location(await new TestBrowser().get('/admin/keys/created')).pathname).toBe('/admin/login');

    const row = z
      .object({
        secret_hash: z.string(),
        brand_id: z.string(),
        org_id: z.null(),
        daily_query_limit: z.number(),
        daily_bytes_limit: z.number(),
        max_bytes_billed: z.number(),
        created_by_user_id: z.string(),
      })
      .parse(await env.DB.prepare("SELECT * FROM api_keys WHERE name = 'Looker <Studio>'").first());
    expect(row).toMatchObject({
      brand_id: 'brand_globex',
      daily_query_limit: 25,
      daily_bytes_limit: 2 * GIB,
      max_bytes_billed: GIB / 2,
      created_by_user_id: DEMO_USER_IDS.org,
    });
    expect(row.secret_hash).toBe(await sha256Hex(secret ?? ''));
    const stored = JSON.stringify(await env.DB.prepare("SELECT * FROM api_keys WHERE name = 'Looker <Studio>'").first());
    expect(stored).not.toContain(secret);
    // The flash is gone from KV once shown, and was never stored in the clear.
    const flashes = await env.OAUTH_KV.list({ prefix: 'admin-flash:' });
    for (const k of flashes.keys)
      expect(new TextDecoder().decode((await env.OAUTH_KV.get(k.name, 'arrayBuffer')) ?? new ArrayBuffer(0))).not.toContain(secret);

    const brands = await SELF.fetch(`${ORIGIN}/v1/data/brands`, { headers: { authorization: `Bearer ${secret}` } });
    expect(brands.status).toBe(200);
    expect(await brands.json()).toEqual({
      brands: [DEMO_BRAND_LISTING.brand_globex],
    });

    // Back on the list: the prefix, "Live" and the limits, not the secret.
    const list = await page(browser);
    expect(list).toContain((secret ?? '').slice(0, 12));
    expect(list).not.toContain(secret);
    expect(list).toContain('2 GiB / 24 h');
    expect(list).toContain('0.5 GiB per query');
  });

  it('rejects invalid input and scopes the user does not administer, creating nothing', async () => {
    const browser = await signedIn(TEST_ADMINS.brand);
    const html = await page(browser);
    const csrf = inputValue(html, 'csrf');
    const count = async () => (await env.DB.prepare('SELECT count(*) AS n FROM api_keys').first<{ n: number }>())?.n;
    const before = await count();
    const noName = await browser.post('/admin/keys', { csrf, name: ' ', scope: 'brand:brand_acme' });
    expect(noName.status).toBe(400);
    expect(await noName.text()).toContain('Name: give the key a name');
    const badLimit = await browser.post('/admin/keys', { csrf, name: 'x', scope: 'brand:brand_acme', dailyQueries: '-3' });
    expect(badLimit.status).toBe(400);
    const orgKey = await browser.post('/admin/keys', { csrf, name: 'sneaky', scope: 'org:org_demo' });
    expect(orgKey.status).toBe(403);
    const otherBrand = await browser.post('/admin/keys', { csrf, name: 'sneaky', scope: 'brand:brand_umbrella' });
    expect(otherBrand.status).toBe(403);
    expect(await count()).toBe(before);
    // The brand administrator is only offered their brand.
    expect(html).toContain('value="brand:brand_acme"');
    expect(html).not.toContain('value="org:org_demo"');
  });

  it('starts the create form on a brand key, the safer choice, for an organization administrator too', async () => {
    const html = await page(await signedIn(TEST_ADMINS.org));
    const selected = [...html.matchAll(/<option value="([^"]+)" selected/g)].map((m) => m[1]);
    expect(selected).toContain('brand:brand_acme');
    expect(selected).not.toContain('org:org_demo');
    // The organization is still offered.
    expect(html).toContain('value="org:org_demo"');
  });

  it("refuses a name a live key of the same organization has (any case, its brands' keys included); a revoked key's name is free", async () => {
    const browser = await signedIn(TEST_ADMINS.org);
    const count = async () => (await env.DB.prepare('SELECT count(*) AS n FROM api_keys').first<{ n: number }>())?.n;
    const first = await createKey(browser, { name: 'Looker Studio dup', scope: 'brand:brand_acme' });
    const before = await count();
    const csrf = inputValue(await page(browser), 'csrf');
    // An organization key and a key of another brand of the same organization share the namespace.
    const tries: [string, string][] = [
      ['looker studio DUP', 'org:org_demo'],
      ['  Looker Studio dup ', 'brand:brand_globex'],
    ];
    for (const [name, scope] of tries) {
      const res = await browser.post('/admin/keys', { csrf, name, scope });
      expect(res.status).toBe(409);
      const html = await res.text();
      expect(html).toContain('Not created: a live key named &quot;');
      expect(html).toContain('already exists in this organization; choose another name');
      // The form keeps what was typed and marks the name.
      expect(html).toMatch(/id="key-name"[^>]*aria-invalid="true"/);
    }
    expect(await count()).toBe(before);
    // Revoked, its name can be used again.
    await env.DB.prepare('UPDATE api_keys SET revoked_at = 1 WHERE id = ?').bind(first.id).run();
    await createKey(browser, { name: 'Looker Studio dup', scope: 'org:org_demo' });
    expect(await count()).toBe((before ?? 0) + 1);
  });

  it('revokes a key after a confirmation page, at once; another tenant cannot revoke it', async () => {
    const owner = await signedIn(TEST_ADMINS.org);
    const { id, secret } = await createKey(owner, { name: 'to revoke', scope: 'org:org_demo' });
    const revokeLink = `/admin/keys/${id}/revoke`;
    expect(await page(owner)).toContain(`href="${revokeLink}"`);

    // The brand administrator does not manage an org key: no confirmation page, and the post changes nothing.
    const brandAdmin = await signedIn(TEST_ADMINS.brand);
    expect(location(await brandAdmin.get(revokeLink)).search).toBe('?notice=key-not-found');
    const denied = await brandAdmin.post(revokeLink, { csrf: inputValue(await page(brandAdmin), 'csrf'), confirm: 'yes' });
    expect(location(denied).search).toBe('?notice=key-not-found');
    expect((await SELF.fetch(`${ORIGIN}/v1/data/brands`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);

    // The confirmation page names the key and what revoking does; it works without JavaScript (a plain form).
    const confirmPage = await page(owner, revokeLink);
    expect(confirmPage).toContain('Revoke key to revoke?');
    expect(confirmPage).toContain('cannot be undone');
    expect(confirmPage).toMatch(new RegExp(`<form method="post" action="${revokeLink}">`));
    expect(inputValue(confirmPage, 'confirm')).toBe('yes');
    expect(confirmPage).not.toContain('<script');

    // A post without the confirmation goes to the confirmation page and revokes nothing.
    const unconfirmed = await owner.post(revokeLink, { csrf: inputValue(confirmPage, 'csrf') });
    expect(unconfirmed.status).toBe(303);
    expect(location(unconfirmed).pathname).toBe(revokeLink);
    expect((await SELF.fetch(`${ORIGIN}/v1/data/brands`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);

    const revoked = await owner.post(revokeLink, { csrf: inputValue(confirmPage, 'csrf'), confirm: inputValue(confirmPage, 'confirm') });
    expect(revoked.status).toBe(303);
    expect(location(revoked).search).toBe('?notice=key-revoked');
    expect((await SELF.fetch(`${ORIGIN}/v1/data/brands`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
    expect((await rawToolsList(secret)).status).toBe(401);
    expect(await (await owner.get(`${location(revoked).pathname}${location(revoked).search}`)).text()).toContain('The key was revoked');
  });
});

describe('CSRF on the admin forms', () => {
  it('refuses a create or revoke without the session token, or from another origin', async () => {
    const browser = await signedIn(TEST_ADMINS.org);
    const csrf = inputValue(await page(browser), 'csrf');
    const count = async () => (await env.DB.prepare('SELECT count(*) AS n FROM api_keys').first<{ n: number }>())?.n;
    const before = await count();
    expect((await browser.post('/admin/keys', { name: 'forged', scope: 'org:org_demo' })).status).toBe(403);
    expect((await browser.post('/admin/keys', { csrf: 'a'.repeat(64), name: 'forged', scope: 'org:org_demo' })).status).toBe(403);
    expect((await browser.post('/admin/keys', { csrf, name: 'forged', scope: 'org:org_demo' }, 'https://evil.example')).status).toBe(403);
    // A token from another session does not fit this one.
    const otherCsrf = inputValue(await page(await signedIn(TEST_ADMINS.org)), 'csrf');
    expect((await browser.post('/admin/keys', { csrf: otherCsrf, name: 'forged', scope: 'org:org_demo' })).status).toBe(403);
    expect(await count()).toBe(before);
    const keyId = z
      .object({ id: z.string() })
      .parse(await env.DB.prepare("SELECT id FROM api_keys WHERE org_id = 'org_demo' AND revoked_at IS NULL").first()).id;
    expect((await browser.post(`/admin/keys/${keyId}/revoke`, {})).status).toBe(403);
    expect(await env.DB.prepare('SELECT revoked_at FROM api_keys WHERE id = ?').bind(keyId).first()).toEqual({ revoked_at: null });
    expect((await browser.post('/admin/logout', {})).status).toBe(403);
  });
});

describe('connected assistants', () => {
  it('shows the MCP address to connect to, also when nothing is connected', async () => {
    await addUser('user_lonely', 'lonely@demo.test', 'lonely-password-1');
    await env.DB.prepare(
      "INSERT INTO memberships (user_id, brand_id, role, created_at) VALUES ('user_lonely', 'brand_initech', 'admin', ?)",
    )
      .bind(Date.now())
      .run();
    const html = await page(await signedIn({ email: 'lonely@demo.test', password: 'lonely-password-1' }), '/admin/assistants');
    expect(html).toContain('No assistants are connected yet');
    expect(html).toContain(`<code class="address" id="mcp-url">${ORIGIN}/v1/data/mcp</code>`);
    expect(html).toMatch(/<a href="\/admin\/assistants" aria-current="page"><span class="nav-long">Connected assistants<\/span>/);
  });

  it('lists connections with client, user and dates, and revoking one (after confirming) cuts it off at once', async () => {
    const { tokens } = await connectAssistant(TEST_ADMINS.brand, new TestBrowser('198.51.100.60'));
    expect((await rawToolsList(tokens.access_token)).status).toBe(200);

    // Use is recorded (in waitUntil) for the "last used" column.
    const grantOfBrand = (await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.brand)).items[0]?.id ?? '';
    await vi.waitFor(async () => expect(await env.OAUTH_KV.get(`grant-last-used:${grantOfBrand}`)).not.toBeNull(), WAIT_UNTIL_WORK);

    // The org administrator sees the brand administrator's connection (their reach is inside the org's).
    const org = await signedIn(TEST_ADMINS.org);
    const html = await page(org, '/admin/assistants');
    expect(html).not.toContain('not yet');
    expect(html.match(/<td data-label="Last used"><time datetime=/g)?.length).toBeGreaterThanOrEqual(1);
    expect(html).toContain('Test Assistant');
    expect(html).toContain(TEST_ADMINS.brand.email);
    expect(html).toContain('assistant.example');
    const link = /href="(\/admin\/assistants\/revoke\?[^"]+)"/.exec(html)?.[1]?.replaceAll('&amp;', '&') ?? '';
    const confirmPage = await page(org, link);
    expect(confirmPage).toContain('Disconnect Test Assistant?');
    const grantId = inputValue(confirmPage, 'grantId');
    expect(grantId).toBe(grantOfBrand);
    expect(inputValue(confirmPage, 'userId')).toBe(DEMO_USER_IDS.brand);

    // The brand administrator cannot revoke the org administrator's connection.
    const orgConn = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.61'));
    const orgGrant = (await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.org)).items[0]?.id ?? '';
    const brandAdmin = await signedIn(TEST_ADMINS.brand);
    const brandHtml = await page(brandAdmin, '/admin/assistants');
    expect(brandHtml).not.toContain(orgGrant);
    const refused = await brandAdmin.post('/admin/assistants/revoke', {
      csrf: inputValue(brandHtml, 'csrf'),
      userId: DEMO_USER_IDS.org,
      grantId: orgGrant,
      confirm: 'yes',
    });
    expect(location(refused).search).toBe('?notice=assistant-not-found');
    expect((await rawToolsList(orgConn.tokens.access_token)).status).toBe(200);

    // Without the confirmation, back to the confirmation page, still connected.
    const unconfirmed = await org.post('/admin/assistants/revoke', {
      csrf: inputValue(confirmPage, 'csrf'),
      userId: DEMO_USER_IDS.brand,
      grantId,
    });
    expect(`${location(unconfirmed).pathname}${location(unconfirmed).search}`).toBe(link);
    expect((await rawToolsList(tokens.access_token)).status).toBe(200);

    const revoked = await org.post('/admin/assistants/revoke', {
      csrf: inputValue(confirmPage, 'csrf'),
      userId: DEMO_USER_IDS.brand,
      grantId,
      confirm: 'yes',
    });
    expect(revoked.status).toBe(303);
    expect(location(revoked).search).toBe('?notice=assistant-revoked');
    const after = await rawToolsList(tokens.access_token);
    expect(after.status).toBe(401);
    expect((await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.brand)).items).toHaveLength(0);
    const after2 = await (await org.get(`${location(revoked).pathname}${location(revoked).search}`)).text();
    expect(after2).toContain('The assistant was disconnected');
    expect(after2).not.toContain(grantId);
  });
});
